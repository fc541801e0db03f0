// `tilesweep report`: an archive as the tables of the Axon paper (speedup over the heuristic
// baseline per shape, ablations, candidates and time per stage) plus AccelOpt's % of roofline,
// proof and search statistics. A Report is plain data; the formatters print it as aligned text,
// long-format CSV (table,row,column,value,kernel,target,shape,mesh: the last four name each
// value's key wherever the table has one) or JSON. Every report says that its latencies are
// simulated and which target descriptions produced them.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "tilesweep/report/select.h"

namespace ts::report {

// A cell: a number (printed with `unit`: "x", "%", " ns", " s", or "") or a text.
struct Cell {
  std::string text;
  double number = std::nan("");
  bool numeric = false;
  std::string unit;

  static Cell of(std::string t) { return {std::move(t), std::nan(""), false, ""}; }
  static Cell num(double v, std::string unit = "") { return {"", v, true, std::move(unit)}; }
};

struct Table {
  std::string id;     // short machine name: "speedup", "ablation", ...
  std::string title;  // what it shows, in words
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;  // each as long as columns; rows[i][0] names the row
  std::string target;                   // the target of every row, when the table is about one
  // Per column, the (shape, mesh) it stands for when columns are shapes (as in the speedup
  // tables); empty otherwise. CSV and JSON rows carry them so each value names its full key.
  std::vector<std::pair<std::string, std::string>> column_keys;
};

struct Report {
  std::vector<std::string> notes;  // printed before the tables (simulated latencies, targets)
  std::vector<Table> tables;
};

Report build_report(const LoadedArchive& archive);

std::string format_text(const Report& r);
std::string format_csv(const Report& r);
std::string format_json(const Report& r);

// exp(mean(log x)) over the finite positive values; NaN when there are none.
double geomean(const std::vector<double>& xs);

}  // namespace ts::report

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "tilesweep/base/json_string.h"
#include "tilesweep/report/report.h"

namespace ts::report {
namespace {

std::string cell_text(const Cell& c) {
  if (!c.numeric) return c.text;
  if (!std::isfinite(c.number)) return "-";
  if (c.unit == "x") return fmt::format("{:.2f}x", c.number);
  if (c.unit == "%") return fmt::format("{:.1f}%", c.number);
  if (c.number == std::floor(c.number) && std::abs(c.number) < 1e15)
    return fmt::format("{:.0f}{}", c.number, c.unit);
  return fmt::format("{:.3f}{}", c.number, c.unit);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string json_cell(const Cell& c) {
  if (!c.numeric) return json_string(c.text);
  if (!std::isfinite(c.number)) return "null";
  return fmt::format("{}", c.number);
}

// The key fields (kernel, target, shape, mesh) of cell `c` of `row`: from the row's own columns of
// those names, else from the table (its target, the column's shape and mesh).
std::array<std::string, 4> key_of(const Table& t, const std::vector<Cell>& row, std::size_t c) {
  std::array<std::string, 4> key;
  static const char* names[] = {"kernel", "target", "shape", "mesh"};
  for (std::size_t k = 0; k < key.size(); ++k) {
    auto col = std::find(t.columns.begin(), t.columns.end(), names[k]);
    if (col != t.columns.end()) key[k] = row[std::size_t(col - t.columns.begin())].text;
  }
  if (key[1].empty()) key[1] = t.target;
  if (c < t.column_keys.size() && !t.column_keys[c].second.empty())
    key[2] = t.column_keys[c].first, key[3] = t.column_keys[c].second;
  return key;
}

std::string csv_value(const Cell& c) {
  if (!c.numeric) return c.text;
  return std::isfinite(c.number) ? fmt::format("{}", c.number) : "";
}

}  // namespace

std::string format_text(const Report& r) {
  std::string out;
  for (const auto& n : r.notes) out += n + "\n";
  for (const auto& t : r.tables) {
    std::vector<std::size_t> width(t.columns.size());
    for (std::size_t c = 0; c < t.columns.size(); ++c) width[c] = t.columns[c].size();
    for (const auto& row : t.rows)
      for (std::size_t c = 0; c < row.size(); ++c)
        width[c] = std::max(width[c], cell_text(row[c]).size());
    out += fmt::format("\n{}\n", t.title);
    auto line = [&](auto&& text_of) {
      std::string l = " ";
      for (std::size_t c = 0; c < t.columns.size(); ++c)
        l += c == 0 ? fmt::format(" {:<{}}", text_of(c), width[c])
                    : fmt::format("  {:>{}}", text_of(c), width[c]);
      while (!l.empty() && l.back() == ' ') l.pop_back();
      out += l + "\n";
    };
    line([&](std::size_t c) { return t.columns[c]; });
    for (const auto& row : t.rows) line([&](std::size_t c) { return cell_text(row[c]); });
    if (t.rows.empty()) out += "  (none)\n";
  }
  return out;
}

std::string format_csv(const Report& r) {
  std::string out = "table,row,column,value,kernel,target,shape,mesh\n";
  for (const auto& n : r.notes) out += fmt::format("note,,,{},,,,\n", csv_field(n));
  for (const auto& t : r.tables)
    for (const auto& row : t.rows)
      for (std::size_t c = 1; c < row.size(); ++c) {
        auto key = key_of(t, row, c);
        out +=
            fmt::format("{},{},{},{},{},{},{},{}\n", csv_field(t.id), csv_field(cell_text(row[0])),
                        csv_field(t.columns[c]), csv_field(csv_value(row[c])), csv_field(key[0]),
                        csv_field(key[1]), csv_field(key[2]), csv_field(key[3]));
      }
  return out;
}

std::string format_json(const Report& r) {
  std::string out = "{\n  \"simulated\": true,\n  \"notes\": [";
  for (std::size_t i = 0; i < r.notes.size(); ++i) out += (i ? ", " : "") + json_string(r.notes[i]);
  out += "],\n  \"tables\": [";
  for (std::size_t i = 0; i < r.tables.size(); ++i) {
    const Table& t = r.tables[i];
    out += fmt::format("{}\n    {{\"id\": {}, \"title\": {}, ", i ? "," : "", json_string(t.id),
                       json_string(t.title));
    if (!t.target.empty()) out += fmt::format("\"target\": {}, ", json_string(t.target));
    if (!t.column_keys.empty()) {
      out += "\"column_keys\": [";
      for (std::size_t c = 0; c < t.column_keys.size(); ++c)
        out += fmt::format("{}{}", c ? ", " : "",
                           t.column_keys[c].second.empty()
                               ? std::string("null")
                               : fmt::format("{{\"shape\": {}, \"mesh\": {}}}",
                                             json_string(t.column_keys[c].first),
                                             json_string(t.column_keys[c].second)));
      out += "], ";
    }
    out += "\"columns\": [";
    for (std::size_t c = 0; c < t.columns.size(); ++c)
      out += (c ? ", " : "") + json_string(t.columns[c]);
    out += "], \"rows\": [";
    for (std::size_t k = 0; k < t.rows.size(); ++k) {
      out += k ? ", [" : "[";
      for (std::size_t c = 0; c < t.rows[k].size(); ++c)
        out += (c ? ", " : "") + json_cell(t.rows[k][c]);
      out += "]";
    }
    out += "]}";
  }
  return out + "\n  ]\n}\n";
}

}  // namespace ts::report

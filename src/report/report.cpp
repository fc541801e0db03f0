#include "tilesweep/report/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "report_tables.h"
#include "tilesweep/base/hash.h"
#include "tilesweep/report/job_view.h"

namespace ts::report {

double geomean(const std::vector<double>& xs) {
  double sum = 0;
  int n = 0;
  for (double x : xs)
    if (std::isfinite(x) && x > 0) sum += std::log(x), ++n;
  return n ? std::exp(sum / n) : std::nan("");
}

namespace {

using store::BestRecord;

// Kernels (labels) and targets in order of first appearance in /best.
template <class F>
std::vector<std::string> ordered(const std::vector<BestRecord>& best, F&& field) {
  std::vector<std::string> out;
  for (const auto& b : best)
    if (std::find(out.begin(), out.end(), field(b)) == out.end()) out.push_back(field(b));
  return out;
}

std::map<std::string, std::string> suites(const LoadedArchive& l) {
  std::map<std::string, std::string> out;
  for (const auto& s : l.provenance.sources) {
    try {
      for (const auto& k :
           parse_job_view(s.job_toml, l.archive.meta.kernel_sources, s.path).kernels)
        out.emplace(k.label, k.suite);
    } catch (const std::exception&) {  // an unreadable job only loses the suite names
    }
  }
  return out;
}

std::string shape_label(const BestRecord& b) {
  std::string s = b.shape.empty() ? "-" : b.shape;
  return b.mesh == "1" ? s : s + " @" + b.mesh;
}

std::vector<std::string> notes(const LoadedArchive& l) {
  const store::Meta& m = l.archive.meta;
  std::vector<std::string> out;
  out.push_back(fmt::format(
      "tilesweep report of '{}': job {}, status {}, written by tilesweep {}{}", l.path, m.job_name,
      m.status, m.tool_version, m.git_commit.empty() ? "" : " (" + m.git_commit + ")"));
  out.push_back(
      "all latencies are simulated by tilesweep's model of each target (not measured on hardware)");
  for (const auto& [name, text] : m.targets)
    out.push_back(
        fmt::format("target {}: simulated from the description recorded in /meta target_texts "
                    "({} bytes, hash {:016x})",
                    name, text.size(), hash_bytes(text)));
  return out;
}

// "M=1024,N=2048" -> {{"M", "1024"}, {"N", "2048"}}; empty when the text is not of that form.
std::vector<std::pair<std::string, std::string>> shape_dims(const std::string& shape) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t at = 0;
  while (at < shape.size()) {
    std::size_t end = std::min(shape.find(',', at), shape.size()), eq = shape.find('=', at);
    if (eq == std::string::npos || eq >= end) return {};
    std::string value = shape.substr(eq + 1, end - eq - 1);
    if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) return {};
    out.emplace_back(shape.substr(at, eq - at), value);
    at = end + 1;
  }
  return out;
}

// "M x N" when every shape (on one device) names the same dims in the same order, else "".
std::string dim_names(const std::vector<std::string>& shapes) {
  std::vector<std::string> names;
  for (const auto& s : shapes) {
    std::vector<std::string> these;
    for (const auto& [name, value] : shape_dims(s)) these.push_back(name);
    if (these.empty() || (!names.empty() && these != names)) return "";
    names = these;
  }
  return fmt::format("{}", fmt::join(names, " x "));
}

// "M=1024,N=2048" -> "1Kx2K", Axon's column labels (1K = 1024).
std::string compact_shape(const std::string& shape) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : shape_dims(shape)) {
    long long v = std::atoll(value.c_str());
    parts.push_back(v > 0 && v % 1024 == 0 ? fmt::format("{}K", v / 1024) : value);
  }
  return fmt::format("{}", fmt::join(parts, "x"));
}

std::vector<Table> speedup_tables(const std::vector<BestRecord>& best) {
  std::vector<Table> out;
  for (const auto& target : ordered(best, [](const BestRecord& b) { return b.target; })) {
    struct Group {
      std::vector<std::string> shapes;
      std::vector<std::pair<std::string, std::string>> keys;
      std::vector<std::vector<Cell>> rows;
    };
    std::vector<Group> groups;
    for (const auto& kernel : ordered(best, [](const BestRecord& b) { return b.kernel; })) {
      std::vector<std::string> shapes;
      std::vector<Cell> row{Cell::of(kernel)};
      for (const auto& b : best)
        if (b.kernel == kernel && b.target == target)
          shapes.push_back(shape_label(b)),
              row.push_back(Cell::num(b.heuristic_ns / b.latency_ns, "x"));
      std::vector<std::pair<std::string, std::string>> keys{{"", ""}};
      for (const auto& b : best)
        if (b.kernel == kernel && b.target == target) keys.emplace_back(b.shape, b.mesh);
      if (shapes.empty()) continue;
      auto g = std::find_if(groups.begin(), groups.end(),
                            [&](const auto& x) { return x.shapes == shapes; });
      if (g == groups.end()) g = groups.insert(groups.end(), {shapes, std::move(keys), {}});
      g->rows.push_back(std::move(row));
    }
    for (auto& [shapes, keys, rows] : groups) {
      std::string dims = dim_names(shapes);
      Table t{"speedup",
              fmt::format("Speedup of the best candidate over the heuristic baseline on {} "
                          "(heuristic / best latency, per shape{}; Axon Tables 4-5)",
                          target, dims.empty() ? "" : " " + dims),
              {"kernel"},
              {}};
      for (const auto& s : shapes) t.columns.push_back(dims.empty() ? s : compact_shape(s));
      t.columns.push_back("geomean");
      for (auto& row : rows) {
        std::vector<double> xs;
        for (std::size_t i = 1; i < row.size(); ++i) xs.push_back(row[i].number);
        row.push_back(Cell::num(geomean(xs), "x"));
      }
      t.rows = std::move(rows);
      t.target = target;
      t.column_keys = std::move(keys);
      t.column_keys.emplace_back("", "");  // geomean
      out.push_back(std::move(t));
    }
  }
  return out;
}

// Rows of /best per (kernel, target), in order of first appearance.
std::vector<std::vector<const BestRecord*>> by_kernel_target(const std::vector<BestRecord>& best) {
  std::vector<std::vector<const BestRecord*>> out;
  for (const auto& b : best) {
    auto g = std::find_if(out.begin(), out.end(), [&](const auto& x) {
      return x[0]->kernel == b.kernel && x[0]->target == b.target;
    });
    if (g == out.end())
      out.push_back({&b});
    else
      g->push_back(&b);
  }
  return out;
}

template <class F>
double geomean_of(const std::vector<const BestRecord*>& rows, F&& f) {
  std::vector<double> xs;
  for (const auto* b : rows) xs.push_back(f(*b));
  return geomean(xs);
}

Table ablation_table(const std::vector<BestRecord>& best) {
  Table t{"ablation",
          "Ablations: speedup over the heuristic baseline, geomean over shapes (Axon Table 6)",
          {"kernel", "target", "shapes", "heuristic", "no-algebra", "no-fusion", "best"},
          {}};
  for (const auto& rows : by_kernel_target(best)) {
    auto over = [&](double BestRecord::*m) {
      return geomean_of(rows, [&](const BestRecord& b) { return b.heuristic_ns / (b.*m); });
    };
    t.rows.push_back({Cell::of(rows[0]->kernel), Cell::of(rows[0]->target),
                      Cell::num(double(rows.size())),
                      Cell::num(over(&BestRecord::heuristic_ns), "x"),
                      Cell::num(over(&BestRecord::no_algebra_ns), "x"),
                      Cell::num(over(&BestRecord::no_fusion_ns), "x"),
                      Cell::num(over(&BestRecord::latency_ns), "x")});
  }
  return t;
}

// Axon Table 6's form: each ablation's latency relative to the full search (best / ablation;
// below 1.0x is a slowdown), min, max and geomean over the shapes.
Table ablation_relative_table(const std::vector<BestRecord>& best) {
  Table t{"ablation_relative",
          "Ablations relative to the full search (best / ablation latency; Axon Table 6)",
          {"kernel", "target", "shapes", "no-algebra min", "no-algebra max", "no-algebra geomean",
           "no-fusion min", "no-fusion max", "no-fusion geomean"},
          {}};
  for (const auto& rows : by_kernel_target(best)) {
    std::vector<Cell> row{Cell::of(rows[0]->kernel), Cell::of(rows[0]->target),
                          Cell::num(double(rows.size()))};
    for (double BestRecord::*m : {&BestRecord::no_algebra_ns, &BestRecord::no_fusion_ns}) {
      std::vector<double> xs;
      for (const auto* b : rows) xs.push_back(b->latency_ns / (b->*m));
      auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
      row.insert(row.end(),
                 {Cell::num(*lo, "x"), Cell::num(*hi, "x"), Cell::num(geomean(xs), "x")});
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

double pct(const BestRecord& b) { return 100.0 * b.roofline_ns / b.latency_ns; }
double pct_attainable(const BestRecord& b) { return 100.0 * b.attainable_ns / b.latency_ns; }

std::vector<Table> roofline_tables(const std::vector<BestRecord>& best,
                                   const std::map<std::string, std::string>& suite) {
  Table k{"roofline",
          "% of the roofline bound (roofline / best latency; AccelOpt's metric and constants), "
          "geomean over shapes; "
          "and % of the attainable bound (the target's own peaks, at most 100%)",
          {"kernel", "target", "suite", "shapes", "geomean", "min", "max", "attainable geomean"},
          {}};
  std::map<std::pair<std::string, std::string>, std::vector<double>> per_suite,
      per_suite_attainable;
  for (const auto& rows : by_kernel_target(best)) {
    std::vector<double> xs, as;
    for (const auto* b : rows) xs.push_back(pct(*b)), as.push_back(pct_attainable(*b));
    auto s = suite.count(rows[0]->kernel) ? suite.at(rows[0]->kernel) : "other";
    auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
    k.rows.push_back({Cell::of(rows[0]->kernel), Cell::of(rows[0]->target), Cell::of(s),
                      Cell::num(double(rows.size())), Cell::num(geomean(xs), "%"),
                      Cell::num(*lo, "%"), Cell::num(*hi, "%"), Cell::num(geomean(as), "%")});
    per_suite[{s, rows[0]->target}].push_back(geomean(xs));
    per_suite_attainable[{s, rows[0]->target}].push_back(geomean(as));
  }
  Table s{"roofline_suite",
          "% of the roofline bound per suite: geomean over its kernels with a program; and of the "
          "attainable bound",
          {"suite", "target", "kernels", "without a program", "geomean", "attainable geomean"},
          {}};
  for (const auto& [key, xs] : per_suite) {
    auto scored =
        std::count_if(xs.begin(), xs.end(), [](double x) { return std::isfinite(x) && x > 0; });
    s.rows.push_back({Cell::of(key.first), Cell::of(key.second), Cell::num(double(scored)),
                      Cell::num(double(xs.size() - scored)), Cell::num(geomean(xs), "%"),
                      Cell::num(geomean(per_suite_attainable.at(key)), "%")});
  }
  return {k, s};
}

}  // namespace

Report build_report(const LoadedArchive& l) {
  const store::Archive& a = l.archive;
  Report r;
  r.notes = notes(l);
  r.tables = speedup_tables(a.best);
  r.tables.push_back(detail::latency_table(a));
  r.tables.push_back(detail::latency_total_table(a.best));
  r.tables.push_back(ablation_table(a.best));
  r.tables.push_back(ablation_relative_table(a.best));
  for (auto& t : roofline_tables(a.best, suites(l))) r.tables.push_back(std::move(t));
  r.tables.push_back(detail::stage_table(a));
  r.tables.push_back(detail::phase_table(a.meta));
  r.tables.push_back(detail::proof_table(a.proofs));
  r.tables.push_back(detail::search_table(l));
  return r;
}

}  // namespace ts::report

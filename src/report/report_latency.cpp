// The absolute-latency tables of a report: the best candidate's simulated latency per (kernel,
// target, shape, mesh) with what bounds it, and the per-target totals over a job's keys (the
// sum a user compares with a model layer's time).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report_tables.h"

namespace ts::report::detail {

std::string bound_of(const store::BestRecord& b) {
  if (!std::isfinite(b.latency_ns) || b.latency_ns <= 0) return "no program";
  std::size_t busiest = 0;
  for (std::size_t e = 1; e < b.busy_ns.size(); ++e)
    if (b.busy_ns[e] > b.busy_ns[busiest]) busiest = e;
  double busy_ns = b.busy_ns[busiest];
  if (!(busy_ns > 0)) return "-";
  std::string out =
      fmt::format("{} {:.0f}% busy", store::kEngineNames[busiest], 100.0 * busy_ns / b.latency_ns);
  if (b.collective_ns > 0)
    out += fmt::format(", collectives {:.0f}%", 100.0 * b.collective_ns / b.latency_ns);
  return out;
}

Table latency_table(const std::vector<store::BestRecord>& best) {
  Table t{"latency",
          "Best simulated latency per kernel, target, shape and mesh (us), its roofline bound "
          "(AccelOpt's "
          "constants), its attainable bound (the target's own peaks, which no candidate beats), "
          "and the engine "
          "that bounds it (busy time / latency)",
          {"kernel", "target", "shape", "mesh", "best us", "heuristic us", "roofline us",
           "% of roofline", "bound", "attainable us", "% of attainable"},
          {}};
  auto us = [](double ns) { return Cell::num(ns / 1000.0, " us"); };
  for (const auto& b : best) {
    double pct = 100.0 * b.roofline_ns / b.latency_ns;
    double pct_attainable =
        100.0 * b.attainable_ns / b.latency_ns;  // NaN from an archive before schema 3
    t.rows.push_back({Cell::of(b.kernel), Cell::of(b.target),
                      Cell::of(b.shape.empty() ? "-" : b.shape), Cell::of(b.mesh), us(b.latency_ns),
                      us(b.heuristic_ns), us(b.roofline_ns), Cell::num(pct, "%"),
                      Cell::of(bound_of(b)), us(b.attainable_ns), Cell::num(pct_attainable, "%")});
  }
  return t;
}

Table latency_total_table(const std::vector<store::BestRecord>& best) {
  Table t{"latency_total",
          "Total best latency per target and mesh over the job's (kernel, shape) keys (us; a key "
          "without a program is counted apart, not added)",
          {"target", "mesh", "keys", "without a program", "best us", "heuristic us", "roofline us"},
          {}};
  struct Sum {
    double keys = 0, missing = 0, best = 0, heuristic = 0, roofline = 0;
  };
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, Sum> sums;
  for (const auto& b : best) {
    auto key = std::make_pair(b.target, b.mesh);
    if (!sums.count(key)) order.push_back(key);
    Sum& s = sums[key];
    s.keys += 1;
    if (!std::isfinite(b.latency_ns)) {
      s.missing += 1;
      continue;
    }
    s.best += b.latency_ns, s.roofline += b.roofline_ns;
    s.heuristic += std::isfinite(b.heuristic_ns) ? b.heuristic_ns : std::nan("");
  }
  for (const auto& key : order) {
    const Sum& s = sums[key];
    t.rows.push_back({Cell::of(key.first), Cell::of(key.second), Cell::num(s.keys),
                      Cell::num(s.missing), Cell::num(s.best / 1000.0, " us"),
                      Cell::num(s.heuristic / 1000.0, " us"),
                      Cell::num(s.roofline / 1000.0, " us")});
  }
  return t;
}

}  // namespace ts::report::detail

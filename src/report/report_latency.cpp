// The absolute-latency tables of a report: the best candidate's simulated latency per (kernel,
// target, shape, mesh) with what bounds it, and the per-target totals over a job's keys (the
// sum a user compares with a model layer's time).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report_tables.h"
#include "tilesweep/report/why.h"
#include "tilesweep/target/target.h"

namespace ts::report::detail {

Table latency_table(const store::Archive& a) {
  std::map<std::string, int> partitions;  // per target, 0 when not a built-in one
  for (const auto& b : a.best)
    if (!partitions.count(b.target)) {
      try {
        partitions[b.target] = target::builtin_target(b.target).sbuf.partitions;
      } catch (const std::exception&) {
        partitions[b.target] = 0;
      }
    }
  Table t{"latency",
          "Best simulated latency per kernel, target, shape and mesh (us), its roofline bound "
          "(AccelOpt's constants), its attainable bound (the target's own peaks, which no "
          "candidate beats), and the engine that bounds it (busy time / latency; partitions left "
          "idle and spilled bytes where so: `tilesweep why` says more)",
          {"kernel", "target", "shape", "mesh", "best us", "heuristic us", "roofline us",
           "% of roofline", "bound", "attainable us", "% of attainable"},
          {}};
  auto us = [](double ns) { return Cell::num(ns / 1000.0, " us"); };
  for (const auto& b : a.best) {
    double pct = 100.0 * b.roofline_ns / b.latency_ns;
    double pct_attainable =
        100.0 * b.attainable_ns / b.latency_ns;  // NaN from an archive before schema 3
    t.rows.push_back({Cell::of(b.kernel), Cell::of(b.target),
                      Cell::of(b.shape.empty() ? "-" : b.shape), Cell::of(b.mesh), us(b.latency_ns),
                      us(b.heuristic_ns), us(b.roofline_ns), Cell::num(pct, "%"),
                      Cell::of(bound_phrase(b, best_candidate(a, b), partitions[b.target])),
                      us(b.attainable_ns), Cell::num(pct_attainable, "%")});
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

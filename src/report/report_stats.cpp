// The statistics tables of a report: candidates and time per stage (Axon Table 7), phases,
// proofs and search totals.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report_tables.h"

namespace ts::report::detail {

Table stage_table(const store::Archive& a) {
  Table t{
      "stages",
      "Candidates and time per (kernel, target) (Axon Table 7): /best counts, /progress unit times",
      {"kernel", "target", "shapes", "candidates", "infeasible", "feasible", "units",
       "unit seconds", "candidates/s"},
      {}};
  struct Acc {
    double shapes = 0, candidates = 0, infeasible = 0, units = 0, seconds = 0;
  };
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, Acc> acc;
  for (const auto& b : a.best) {
    auto key = std::make_pair(b.kernel, b.target);
    if (!acc.count(key)) order.push_back(key);
    Acc& x = acc[key];
    x.shapes += 1, x.candidates += double(b.candidates), x.infeasible += double(b.infeasible);
  }
  for (const auto& p : a.progress) {
    auto it = acc.find({p.kernel, p.target});
    if (it != acc.end()) it->second.units += 1, it->second.seconds += p.seconds;
  }
  for (const auto& key : order) {
    const Acc& x = acc[key];
    t.rows.push_back(
        {Cell::of(key.first), Cell::of(key.second), Cell::num(x.shapes), Cell::num(x.candidates),
         Cell::num(x.infeasible), Cell::num(x.candidates - x.infeasible), Cell::num(x.units),
         Cell::num(x.seconds, " s"),
         Cell::num(x.seconds > 0 ? std::round(x.candidates / x.seconds) : std::nan(""))});
  }
  return t;
}

Table phase_table(const store::Meta& m) {
  Table t{"phases", "Wall time per phase (/meta phase_seconds)", {"phase", "seconds"}, {}};
  for (const auto& [phase, s] : m.phase_seconds)
    t.rows.push_back({Cell::of(phase), Cell::num(s, " s")});
  return t;
}

Table proof_table(const std::vector<store::ProofRecord>& proofs) {
  Table t{"proofs",
          "Solver queries (/proofs)",
          {"kind", "queries", "equivalent", "not equivalent", "unknown", "total ms", "max ms"},
          {}};
  std::map<std::string, std::vector<double>> acc;  // queries, eq, neq, unknown, total, max
  for (const auto& p : proofs) {
    auto& x = acc.try_emplace(p.kind, std::vector<double>(6, 0.0)).first->second;
    x[0] += 1;
    x[p.verdict == "equivalent" ? 1 : p.verdict == "not equivalent" ? 2 : 3] += 1;
    x[4] += p.ms, x[5] = std::max(x[5], p.ms);
  }
  for (const auto& [kind, x] : acc)
    t.rows.push_back({Cell::of(kind), Cell::num(x[0]), Cell::num(x[1]), Cell::num(x[2]),
                      Cell::num(x[3]), Cell::num(x[4], " ms"), Cell::num(x[5], " ms")});
  return t;
}

Table search_table(const LoadedArchive& l) {
  const store::Archive& a = l.archive;
  Table t{"search", "Search statistics", {"item", "value"}, {}};
  auto add = [&](const std::string& k, Cell v) { t.rows.push_back({Cell::of(k), std::move(v)}); };
  double scored = 0, seconds = 0, infeasible = 0;
  for (const auto& p : a.progress) scored += double(p.candidates), seconds += p.seconds;
  for (const auto& b : a.best) infeasible += double(b.infeasible);
  std::string jobs;
  for (const auto& s : l.provenance.sources)
    jobs += (jobs.empty() ? "" : ", ") + s.job_name + " (" + s.path + ")";
  add("jobs", Cell::of(jobs));
  add("status", Cell::of(a.meta.status));
  add("ranks x threads", Cell::of(fmt::format("{} x {}", a.meta.ranks, a.meta.threads)));
  add("start", Cell::of(a.meta.start_time));
  add("end", Cell::of(a.meta.end_time));
  add("(kernel, target, shape, mesh) keys", Cell::num(double(a.best.size())));
  add("work units done", Cell::num(double(a.progress.size())));
  add("candidates scored", Cell::num(scored));
  add("of which infeasible", Cell::num(infeasible));
  add("candidates kept (/candidates rows)", Cell::num(double(a.candidates.size())));
  add("unit seconds (summed over ranks and threads)", Cell::num(seconds, " s"));
  add("candidates per unit-second",
      Cell::num(seconds > 0 ? std::round(scored / seconds) : std::nan("")));
  return t;
}

}  // namespace ts::report::detail

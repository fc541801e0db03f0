#include "tilesweep/sweep/results.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "tilesweep/lower/fusion.h"
#include "tilesweep/sweep/score.h"
#include "tilesweep/sweep/unit_work.h"

namespace ts::sweep {

namespace {

bool row_better(const store::CandidateRecord& a, const store::CandidateRecord& b) {
  double la = std::isnan(a.latency_ns) ? INFINITY : a.latency_ns, lb = std::isnan(b.latency_ns) ? INFINITY : b.latency_ns;
  return std::tie(la, a.index) < std::tie(lb, b.index);
}

double heuristic_ns(const SpaceEntry& e) {
  try {
    auto p = e.space->heuristic();
    if (!p) return store::kNotComputed;
    CandidateScore s = score_program(*p, *e.machine);
    return s.feasible ? s.sim.latency_ns : store::kNotComputed;
  } catch (const lower::Unsupported&) {
    return store::kNotComputed;
  }
}

struct SpaceRows {
  std::vector<store::CandidateRecord> rows;
  std::int64_t scored = 0, infeasible = 0;
};

store::BestRecord best_row(const Plan& plan, const SpaceEntry& e, SpaceRows& sr) {
  store::BestRecord b;
  b.kernel = e.label, b.target = e.target_name, b.shape = e.shape_name;
  b.roofline_ns = e.roofline_ns, b.index = -1;
  b.candidates = sr.scored, b.infeasible = sr.infeasible;
  if (!sr.rows.empty()) {
    const auto& r = sr.rows.front();
    b.variant = r.variant, b.choice = r.choice, b.index = r.index, b.config = r.config;
    b.latency_ns = r.latency_ns, b.busy_ns = r.busy_ns;
  }
  if (!plan.job().search.ablations) return b;
  b.heuristic_ns = heuristic_ns(e);
  for (const auto& r : sr.rows) {
    if (r.variant == 0 && std::isnan(b.no_algebra_ns)) b.no_algebra_ns = r.latency_ns;
    if (std::isnan(b.no_fusion_ns) && !e.space->decode(r.index).fused) b.no_fusion_ns = r.latency_ns;
  }
  return b;
}

}  // namespace

SweepRows assemble(const Plan& plan, const std::vector<store::UnitResult>& units) {
  std::vector<SpaceRows> per(plan.spaces().size());
  SweepRows out;
  for (const auto& u : units) {
    if (u.progress.unit < 0 || u.progress.unit >= static_cast<std::int64_t>(plan.units().size())) continue;
    SpaceRows& sr = per[plan.units()[u.progress.unit].space];
    sr.scored += u.progress.candidates;
    for (const auto& r : u.candidates) {
      if (is_summary(r))
        sr.infeasible += r.choice;
      else
        sr.rows.push_back(r);
    }
    out.progress.push_back(u.progress);
  }
  const std::int64_t keep = plan.job().search.keep_top;
  for (std::size_t s = 0; s < per.size(); ++s) {
    auto& rows = per[s].rows;
    std::sort(rows.begin(), rows.end(), row_better);
    rows.erase(std::unique(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.index == b.index; }),
               rows.end());
    out.best.push_back(best_row(plan, plan.spaces()[s], per[s]));
    auto n = keep == kKeepAll ? rows.size() : std::min(rows.size(), static_cast<std::size_t>(keep));
    out.candidates.insert(out.candidates.end(), rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(n));
  }
  std::sort(out.progress.begin(), out.progress.end(), [](const auto& a, const auto& b) { return a.unit < b.unit; });
  return out;
}

}  // namespace ts::sweep

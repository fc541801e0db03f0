#include "tilesweep/sweep/results.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "tilesweep/lower/fusion.h"
#include "tilesweep/sweep/score.h"
#include "tilesweep/sweep/unit_work.h"

namespace ts::sweep {

namespace {

// A kept row and the space it came from (its unit's).
struct Row {
  int space = 0;
  store::CandidateRecord rec;
};

// Best first: mesh latency, then job order of the space (the sharding), then candidate index.
bool row_better(const Row& a, const Row& b) {
  double la = std::isnan(a.rec.latency_ns) ? INFINITY : a.rec.latency_ns;
  double lb = std::isnan(b.rec.latency_ns) ? INFINITY : b.rec.latency_ns;
  return std::tie(la, a.space, a.rec.index) < std::tie(lb, b.space, b.rec.index);
}

// The heuristic baseline in space `e`, on its mesh.
double heuristic_ns(const SpaceEntry& e) {
  auto p = e.space->heuristic();
  if (!p) return store::kNotComputed;
  CandidateScore s = score_program(*p, *e.machine);
  return s.feasible ? e.latency(s.sim.latency_ns) : store::kNotComputed;
}

// The rows of one (kernel, target, shape, mesh): every sharding's.
struct KeyRows {
  int first_space = -1;
  std::vector<Row> rows;
  std::int64_t scored = 0, infeasible = 0;
};

store::BestRecord best_row(const Plan& plan, const KeyRows& kr) {
  const SpaceEntry& first = plan.spaces()[kr.first_space];
  store::BestRecord b;
  b.kernel = first.label, b.target = first.target_name, b.shape = first.shape_name,
  b.mesh = first.setting.mesh;
  b.roofline_ns = first.roofline_ns, b.attainable_ns = first.attainable_ns, b.index = -1;
  b.candidates = kr.scored, b.infeasible = kr.infeasible;
  const SpaceEntry* chosen = &first;  // the best row's space: its sharding, its heuristic
  if (!kr.rows.empty()) {
    const Row& r = kr.rows.front();
    chosen = &plan.spaces()[r.space];
    b.sharding = r.rec.sharding, b.variant = r.rec.variant, b.choice = r.rec.choice,
    b.index = r.rec.index;
    b.config = r.rec.config, b.latency_ns = r.rec.latency_ns, b.compute_ns = r.rec.compute_ns;
    b.collective_ns = r.rec.collective_ns, b.busy_ns = r.rec.busy_ns;
    b.cores = chosen->space->decode(r.rec.index).cores;
  }
  if (!plan.job().search.ablations) return b;
  b.heuristic_ns = heuristic_ns(*chosen);
  for (const auto& r : kr.rows) {
    if (r.rec.variant == 0 && std::isnan(b.no_algebra_ns)) b.no_algebra_ns = r.rec.latency_ns;
    if (std::isnan(b.no_fusion_ns) && !plan.spaces()[r.space].space->decode(r.rec.index).fused)
      b.no_fusion_ns = r.rec.latency_ns;
  }
  return b;
}

}  // namespace

SweepRows assemble(const Plan& plan, const std::vector<store::UnitResult>& units) {
  std::vector<KeyRows> per(static_cast<std::size_t>(plan.keys()));
  for (int s = static_cast<int>(plan.spaces().size()) - 1; s >= 0; --s)
    per[plan.spaces()[s].key].first_space = s;
  SweepRows out;
  for (const auto& u : units) {
    if (u.progress.unit < 0 || u.progress.unit >= static_cast<std::int64_t>(plan.units().size()))
      continue;
    const int space = plan.units()[u.progress.unit].space;
    KeyRows& kr = per[plan.spaces()[space].key];
    kr.scored += u.progress.candidates;
    out.candidates_scored += u.progress.candidates;
    for (const auto& r : u.candidates) {
      if (is_summary(r)) {
        kr.infeasible += r.choice;
        out.infeasible += r.choice;
        out.pruned += r.hbm_read_bytes;
      } else
        kr.rows.push_back({space, r});
    }
    out.progress.push_back(u.progress);
  }
  const std::int64_t keep = plan.job().search.keep_top;
  for (auto& kr : per) {
    auto& rows = kr.rows;
    std::sort(rows.begin(), rows.end(), row_better);
    rows.erase(std::unique(rows.begin(), rows.end(),
                           [](const Row& a, const Row& b) {
                             return a.space == b.space && a.rec.index == b.rec.index;
                           }),
               rows.end());
    out.best.push_back(best_row(plan, kr));
    auto n = keep == kKeepAll ? rows.size() : std::min(rows.size(), static_cast<std::size_t>(keep));
    for (std::size_t i = 0; i < n; ++i) out.candidates.push_back(std::move(rows[i].rec));
  }
  std::sort(out.progress.begin(), out.progress.end(),
            [](const auto& a, const auto& b) { return a.unit < b.unit; });
  return out;
}

}  // namespace ts::sweep

// Scoring candidates of one (kernel, target, shape): materialize candidate i, check capacity,
// simulate. `search_shape` scores a whole space (or a range of it) on all cores with TBB and
// keeps the best, the baselines and the ablation bests. Results are deterministic: ties in
// latency go to the lower index, and thread-local bests are merged in index order.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tilesweep/lower/candidate_cursor.h"
#include "tilesweep/sim/roofline.h"
#include "tilesweep/sim/simulate.h"
#include "tilesweep/sweep/prune.h"
#include "tilesweep/sweep/sample.h"

namespace ts::sweep {

struct CandidateScore {
  std::int64_t index = -1;
  bool feasible = false;
  std::string reason;  // why not (no program at this shape, capacity)
  sim::SimResult sim;

  double latency() const {
    return feasible ? sim.latency_ns : std::numeric_limits<double>::infinity();
  }
};

// Never throws for an infeasible candidate: it is a recorded result. Through a cursor when
// scoring a run of candidates (neighbours share their program's structure).
CandidateScore score_candidate(const lower::CandidateSpace& space, std::int64_t index,
                               const target::Target& t);
CandidateScore score_candidate(lower::CandidateCursor& cursor, std::int64_t index,
                               const target::Target& t);
// `stop_after_ns` (SimOptions::stop_after_ns): past it the result is infeasible with sim.stopped.
CandidateScore score_program(const lower::Program& p, const target::Target& t,
                             double stop_after_ns = PruneBounds::kNone);

// Best-first order: latency, then index.
bool better(const CandidateScore& a, const CandidateScore& b);

struct RangeResult {
  std::vector<CandidateScore> top;  // the best `keep`, best first
  // scored: candidates considered (the pruned among them); infeasible: no program, over
  // capacity or over the simulator's budget; pruned: provably slower than the rows kept
  // (prune.h), not simulated to the end.
  std::int64_t scored = 0, infeasible = 0, pruned = 0;
  double no_algebra_ns = std::numeric_limits<double>::infinity();  // best of the original variant
  double no_fusion_ns = std::numeric_limits<double>::infinity();   // best of the unfused forms
};

// Scores candidates [first, last) in parallel; keeps the best `keep`.
RangeResult score_range(const lower::CandidateSpace& space, std::int64_t first, std::int64_t last,
                        const target::Target& t, std::size_t keep);
// The same over the candidates at `sample` positions [first, last). When `stop` turns nonzero,
// the candidates not yet begun are skipped and it throws UnitInterrupted (interrupt.h). With a
// `pruner`, candidates it proves slower than what is kept are counted as pruned, not kept.
RangeResult score_range(const lower::CandidateSpace& space, const SpaceSample& sample,
                        std::int64_t first, std::int64_t last, const target::Target& t,
                        std::size_t keep, const std::atomic<int>* stop = nullptr,
                        const Pruner* pruner = nullptr);

// Merges b into a (best `keep` kept).
void merge(RangeResult& a, const RangeResult& b, std::size_t keep);

}  // namespace ts::sweep

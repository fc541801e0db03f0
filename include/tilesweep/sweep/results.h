// From completed units to archive rows. Everything is sorted by stable keys (job order of the
// (kernel, target, shape, mesh), then mesh latency, the sharding's space in job order and
// candidate index, then unit id), so the rows depend only on which units are done — never on
// ranks, threads or arrival order.
#pragma once

#include <vector>

#include "tilesweep/store/journal.h"
#include "tilesweep/sweep/plan.h"

namespace ts::sweep {

struct SweepRows {
  std::vector<store::CandidateRecord>
      candidates;                       // the best keep_top per (kernel, target, shape, mesh)
  std::vector<store::BestRecord> best;  // one per (kernel, target, shape, mesh), job order
  std::vector<store::ProgressRecord> progress;  // by unit id
  // Over the done units: candidates considered, the infeasible and the pruned (prune.h) of them.
  std::int64_t candidates_scored = 0, infeasible = 0, pruned = 0;
};

// `units`: completed units (each id once). A /best row is the best over all shardings of its
// mesh; its baselines are on the mesh too: no-algebra and no-fusion over all shardings, the
// heuristic (scored here, once per row, when the job's ablations are on) in the best row's
// sharding. A key with no feasible candidate among the done units gets a /best row with NaN
// latency and index -1.
SweepRows assemble(const Plan& plan, const std::vector<store::UnitResult>& units);

}  // namespace ts::sweep

// From completed units to archive rows. Everything is sorted by stable keys (job order of the
// (kernel, target, shape), then latency and candidate index, then unit id), so the rows depend
// only on which units are done — never on ranks, threads or arrival order.
#pragma once

#include <vector>

#include "tilesweep/store/journal.h"
#include "tilesweep/sweep/plan.h"

namespace ts::sweep {

struct SweepRows {
  std::vector<store::CandidateRecord> candidates;  // the best keep_top per space
  std::vector<store::BestRecord> best;             // one per space, job order
  std::vector<store::ProgressRecord> progress;     // by unit id
};

// `units`: completed units (each id once). The heuristic baseline is scored here, once per
// space, when the job's ablations are on. A space with no feasible candidate among the done
// units gets a /best row with NaN latency and index -1.
SweepRows assemble(const Plan& plan, const std::vector<store::UnitResult>& units);

}  // namespace ts::sweep

// Scoring one work unit: its candidates scored in parallel (score_range, TBB), reduced to the
// rows a sweep keeps — the unit's best `keep` candidates, plus the best candidate of every
// section it touches (so the no-algebra / no-fusion ablations can be recomputed from rows
// alone, also after a resume), plus one summary row carrying the infeasible count.
//
// The summary row is internal to the journal and the wire (never written to /candidates):
// index -1, feasible false, reason kSummaryReason, `choice` = infeasible candidates,
// `hbm_read_bytes` = pruned candidates (prune.h; 0 in journals written before pruning).
#pragma once

#include <atomic>
#include <cstdint>

#include "tilesweep/store/journal.h"
#include "tilesweep/sweep/plan.h"
#include "tilesweep/sweep/score.h"

namespace ts::sweep {

inline constexpr const char* kSummaryReason = "unit summary";

// `keep_top`: kKeepAll or N. Prunes with e.pruner. Thread-safe (a const plan), uses the current TBB
// arena. Throws UnitInterrupted when `stop` turns nonzero before the unit is done (score_range).
store::UnitResult score_unit(const SpaceEntry& e, const WorkUnit& u, std::int64_t keep_top,
                             int rank, const std::atomic<int>* stop = nullptr);

bool is_summary(const store::CandidateRecord& r);

// The /candidates row of a scored candidate of `e` (rank and unit left 0): latency_ns on the
// mesh (e.latency), compute_ns the simulated local latency, collective_ns the sharding's.
store::CandidateRecord candidate_record(const SpaceEntry& e, const CandidateScore& s);

}  // namespace ts::sweep

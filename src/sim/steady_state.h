// Steady-state detection for loops. After an iteration, a snapshot records the core state the
// loop touched relative to the latest end time, with multi-buffer slots and DMA engines put in
// an order that does not depend on the rotation position. Two consecutive snapshots that are
// equal (one or a few iterations apart: a period) mean every touched time advanced by the same
// delta; the iterations being alike (same instructions, same rotations), the following periods
// repeat that step, so they are a shift of the whole touched state by delta x periods.
// Internal to ts_sim.
#pragma once

#include <vector>

#include "core_state.h"

namespace ts::sim {

// What a loop's body can touch: the on-chip buffers its instructions use and the HBM tensors
// it stores to. State outside it does not move with the loop.
struct Footprint {
  std::vector<int> buffers, tensors;
};

struct Snapshot {
  double ref = 0;                      // the state's latest end time
  std::vector<double> state;           // relative times and markers (core_state.h)
  std::vector<std::int64_t> versions;  // of the footprint's buffers
  std::int64_t dma_count = 0;
  Totals totals;
};

// Records `s` as seen by a loop that started when the sequence number was seq0. Reuses `out`'s
// storage.
void take_snapshot(const CoreState& s, const Footprint& f, std::uint64_t seq0, Snapshot& out);

// True when `b`, some iterations (a period) after `a`, shows every touched time advanced by the
// same positive delta (relative tolerance 1e-9 of the time scale) and no engine was busy longer
// than delta in that period (the DMA engines: their time averaged over the engines). Times more
// than `horizon_periods` periods back in both count as equally old.
bool periodic(const Snapshot& a, const Snapshot& b, double horizon_periods);

// Advances `s` (which is at snapshot `b`) by `repeats` more periods of the step a -> b.
void extrapolate(CoreState& s, const Footprint& f, const Snapshot& a, const Snapshot& b,
                 std::int64_t repeats, std::uint64_t seq0);

}  // namespace ts::sim

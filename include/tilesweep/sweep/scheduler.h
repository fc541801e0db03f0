// Dynamic scheduling of work units over MPI ranks. Rank 0 hands out units on request (one at a
// time: unit costs vary by orders of magnitude) and scores units itself on a second thread, so
// it never idles while its main thread serves requests and records results. Recording is
// batched: every result that arrived in one round is made durable by one commit, so the
// journal's sync (milliseconds) is paid per round, not per unit, and does not cap the number of
// units rank 0 can serve a second. Workers ask for a
// unit, score it, send its rows back with the next request, until told to stop. A worker keeps
// kUnitsAhead requests ahead of its scoring — it holds its next units while it scores one — so
// it never waits on rank 0's polling or on a result message leaving.
//
// Message tags: kTagRequest (worker -> 0: an encoded UnitResult, or empty for the first two
// requests), kTagAssign (0 -> worker: 8-byte unit index, or empty: stop), kTagFinal (worker ->
// 0 after its stop: its last UnitResult, or empty).
//
// A rank whose scoring throws prints `error on rank N: ...` and aborts the whole job with exit
// code 2 (LAMMPS style); completed units are already in rank 0's journal. An interrupt
// (interrupt.h) on any rank stops the units in flight, and rank 0 stops handing out units: the
// interrupted units have no result; the others are recorded.
#pragma once

#include <functional>
#include <iosfwd>
#include <vector>

#include "tilesweep/store/journal.h"
#include "tilesweep/sweep/mpi_comm.h"
#include "tilesweep/sweep/plan.h"

namespace ts::sweep {

inline constexpr int kTagRequest = 1;
inline constexpr int kTagAssign = 2;
inline constexpr int kTagFinal = 3;
inline constexpr int kTagInterrupt = 4;  // worker -> 0: it was signalled (the signal, as text)

// Requests a worker keeps open: it holds up to this many units beyond the one it scores, so a
// run of short units never waits on rank 0's answers.
inline constexpr int kUnitsAhead = 2;

struct MasterHooks {
  std::function<void(store::UnitResult&&)> done;  // on rank 0's main thread, in arrival order
  std::function<bool()> stop_requested;           // polled; true: hand out no more units
  // After each round of messages and local results that recorded at least one unit, before
  // rank 0 waits again: makes the round's results durable at once (the journal's group commit).
  std::function<void()> commit;
};

// Rank 0: runs the units of `todo` (indices into plan.units()) until all are done or a stop is
// requested; returns after every rank has returned its last unit and been told to stop.
void run_master(const Comm& comm, const Plan& plan, const std::vector<std::size_t>& todo,
                const MasterHooks& hooks, std::ostream& err);

// Ranks > 0: serves rank 0 until told to stop.
void run_worker(const Comm& comm, const Plan& plan, std::ostream& err);

// Test hook: the unit whose scoring fails with an error on purpose (TILESWEEP_FAIL_UNIT), or -1.
std::int64_t injected_failure_unit();

}  // namespace ts::sweep

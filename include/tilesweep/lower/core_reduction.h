// Cross-core reductions (issue 19, item 3): a program whose one top-level loop carries reductions
// across its iterations (core_split.h refuses such a loop) runs on C NeuronCores as
//
//   for core in range(C):                     # split: one iteration a core
//     (a running statistic starts at its identity)
//     for k in range(T / C): body             # the core's share: iteration core * T / C + k
//     partials[core] <- the core's partial    # HBM scratch (a PSUM accumulator evacuated first)
//   (the cores' barrier)
//   for combine in range(1):                  # one iteration: core 0 alone
//     load partials[0]
//     for r in range(C - 1):                  # the other cores' partials, in core order
//       load partials[1 + r]; fold it into the total
//     the top-level instructions after the loop (on the totals)
//
// The reductions carried are of two kinds, both sums of contiguous ranges of the loop:
//   - PSUM accumulating over the loop (Inst::accumulate_block: a split-K matmul's contraction):
//     the hardware adds, so core 0 adds the partials into an SBUF total (tensor_tensor add), which
//     the instructions after the loop read in the accumulator's place; sum over [0, T) = sum over
//     the cores' ranges, in order;
//   - a streamed reduction's running statistic (split_reduction.h, the fold instructions marked
//     Inst::fold): each core's starts at the reducer's identity, and core 0 folds each partial
//     after core 0's in with the fold itself (the partial in the column each tile's partial
//     takes). The fold is proved, for every A and B, to give
//     op(x[:, :A + B]) from op(x[:, :A]) and op(x[:, A:A + B]): with A the cores before and B a
//     core's range, the same rule that streams the tiles combines the cores.
// Nothing else may flow between the loop's iterations or out of it (core_split_conflict with the
// reduced buffers excused), and the loop's iterations must divide evenly over the cores.
//
// The program is also a sequential one (its core loop run in order on one core: every core's
// partial, then the combine), so the NKI emitter prints it as it prints any other.
#pragma once

#include <set>

#include "tilesweep/lower/lowered.h"
#include "tilesweep/lower/program.h"
#include "tilesweep/target/target.h"

namespace ts::lower {

// The on-chip buffers a cross-core reduction of `p` would combine (PSUM accumulators over a
// top-level loop, streamed reductions' running statistics and their folds' values); empty when
// no top-level loop carries a reduction.
std::set<int> core_reduced(const Program& p);

// `p` on `cores` cores with its cross-core reduction (above); NoProgram saying why not. `p` is a
// program core_split_conflict refuses whose reduced buffers core_reduced finds; cores >= 2.
Lowered<Program> with_core_reduction(const Program& p, int cores, const target::Target& t);

}  // namespace ts::lower

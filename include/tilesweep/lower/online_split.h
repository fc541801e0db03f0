// Online splits (issue 19, tile-level algebra): a reduction or a matmul contraction along a
// streamed free axis whose operand reads an earlier running statistic of the same row
// (FlashAttention's sum(exp(x - max(x))) and matmul(exp(x - max(x)), v)). Streamed tile by tile,
// the statistic is only known for the columns seen so far, so each tile's partial result uses
// the statistic as it stands, and the partial results of earlier tiles are corrected when it
// moves:
//
//   s_new = fold(s_old, stat(x_t))                       (the statistic's own proved split)
//   acc   = combine(acc * chain(s_old, s_new), red(chain(x_t, s_new)))
//
// where `chain(x, s)` is the kernel's own element-wise ops from the streamed value x and the
// statistic s to the consumer's operand (exp(x - s) in a softmax), and the correction is the
// same chain applied to the old statistic in place of x (exp(s_old - s_new)). Nothing is
// pattern-matched: the chain is read off the kernel, and the step is sound exactly when, for
// every A and B (a prefix of A columns seen so far, the next tile of B),
//
//   red(chain(x, stat(x)))[A + B]
//     = combine(red(chain(x[:A], stat(x[:A]))) * chain(stat(x[:A]), s), red(chain(x[A:], s)))
//   with s = fold(stat(x[:A]), stat(x[A:]))
//
// which Z3 decides over unbounded dims (induction over the tiles: the running value equals the
// whole reduction over the prefix). A chain for which the correction is not a factor (x - s,
// summed) is refuted, and such a consumer is not streamed.
#pragma once

#include <string>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/lower/materialize.h"
#include "tilesweep/verify/cache.h"
#include "tilesweep/verify/prove.h"

namespace ts::lower {

struct OnlineSplit {
  int statistic = -1;      // a free-axis reduction of `source` whose plain split is proved
  int consumer = -1;       // a free-axis reduction or a matmul contracting the same axis
  int source = -1;         // the streamed value the statistic reduces
  std::vector<int> chain;  // the element-wise ops from (source, statistic) to the consumer's
                           // streamed operand, in node order (the operand last)
  std::string form;        // the chain as text over x (the source) and s (the statistic), the
                           // kernel's own ops: "exp(sub(x, s))" in a softmax
  bool proved = false;
  verify::Verdict proof;
  std::string why;  // when not proved: why not
};

// The proof kernels (left: the consumer over A + B columns; right: the corrected combination of
// the prefix's and the tile's partial results) of an online split, built from `k`'s own ops;
// a UserError when an op of the chain has no text form (an attribute, an op outside the table).
struct OnlineSplitKernels {
  ir::Kernel whole, split;
};
OnlineSplitKernels online_split_kernels(const ir::Kernel& k, const OnlineSplit& s);

// One entry per (statistic, consumer) pair of `k`: each consumer (a free-axis reduction, or a
// matmul whose left operand's rows are streamed along K) whose streamed operand is an
// element-wise chain of one value and one free-axis reduction of that value, in node order.
// Consumers whose operand reads no statistic (a plain split) or several are not listed.
// Thread-safe; with a cache, the same question is answered once.
std::vector<OnlineSplit> online_splits(const ir::Kernel& k,
                                       const verify::ProveOptions& options = {},
                                       verify::VerdictCache* cache = nullptr);

// Appends to `tilings` (a group's, the first one whole-row) the online ones: a key tile
// (GroupTiling::online) of 512, 1024, .. 8192 columns dividing the group's reduced row and
// shorter than it (from 128 where the streamed value reads a mask: its fully masked key tiles
// are skipped), one row tile per strip; offered when the group has a matmul or a reduction
// whose online split is proved, with its statistic and chain in the group, and every online
// matmul's N (at `dims`) fits one PSUM bank (512 columns). Without an online matmul, the group's
// row-wide ops after the reductions (a softmax's division) run in a second pass over the key
// tiles that makes the streamed value again. A matmul making the streamed row (attention's
// scores) may sit in the group: the online nest computes it key tile by key tile.
void add_online_tilings(std::vector<GroupTiling>& tilings, const ir::Kernel& k,
                        const std::vector<int>& group, const GroupExtent& extent,
                        const std::vector<OnlineSplit>& online, const sem::DimEnv& dims);

// The proved entry whose consumer is `node`, or null.
const OnlineSplit* proved_online(const std::vector<OnlineSplit>& splits, int node);

}  // namespace ts::lower

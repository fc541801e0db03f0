// Split reductions along a tiled free axis (issue 19, tile-level algebra): a row reduction whose
// row is longer than a tile is computed tile by tile into an on-chip running statistic. Each free
// tile's partial reduction is written beside the running value, and the reduction's own proved
// lowering, applied to those two columns, combines them:
//
//   running <- op([running, op(x[:, t*w : (t+1)*w])])          (t = 0, 1, .., T - 1)
//
// with `running` starting at the reducer's identity (0 for sum, the lowest finite number for max,
// the highest for min, 1 for prod). The step is sound when, for every A and B,
//
//   op(x[M, A + B]) = op(concat(op(x[:, :A]), op(x[:, A:])))
//
// (the prefix of A columns seen so far and the next tile of B), which Z3 proves over unbounded
// dims with the verifier's split-range rules; a reduction whose proof fails (mean: the mean of
// two means is not the mean) is not streamed. No op is named: the identity comes from the
// element expression's reducer, the combine is the op itself.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/lower/materialize.h"
#include "tilesweep/verify/cache.h"
#include "tilesweep/verify/prove.h"

namespace ts::lower {

struct SplitReduction {
  int node = -1;
  bool proved = false;
  double identity = 0;  // the running statistic's start
  verify::Verdict proof;
  std::string why;  // when not proved: why not
};

// True for a reduction along the last (free) axis of its operand: what a split may stream.
bool free_axis_reduction(const ir::Kernel& k, int node);

// The proof kernels (left: op over A + B columns; right: op of the two parts' reductions) for
// reduction `node` of `k`; a UserError when the op is not one of the built-in table's.
struct SplitKernels {
  ir::Kernel whole, split;
};
SplitKernels split_kernels(const ir::Kernel& k, int node);

// The reducer of reduction `node` of `k` where it reduces the free axis of its operand as it is
// (its element expression a reducer over a bare read of operand 0: sum, max, min, prod); nullopt
// otherwise (a mean, a sum of squares, another axis).
std::optional<sem::Reducer> plain_free_reducer(const ir::Kernel& k, int node);

// The running statistic's start for reduction node `n`: its reducer's identity; nullopt when its
// element expression has no reducer at the root.
std::optional<double> running_identity(const ir::Node& n);

// The element-wise op of the built-in table that folds one more slice into reduction `n`'s
// running value ("add" for sum, "mul" for prod, "maximum", "minimum"): what a reduction along a
// batch dim (frame.h, reduces_batch) runs per slice. nullopt when its element expression has no
// reducer at the root (mean). tests/lower/batch_reduction_test.cpp proves the step for each.
std::optional<std::string> combine_op(const ir::Node& n);

// One entry per free-axis reduction of `k`, in node order. Thread-safe; with a cache, the same
// op's question is answered once.
std::vector<SplitReduction> split_reductions(const ir::Kernel& k,
                                             const verify::ProveOptions& options = {},
                                             verify::VerdictCache* cache = nullptr);

// Appends to `tilings` (a group's, the first one whole-row) the streamed ones: the free tile
// (GroupTiling::free) of 512, 1024, .. 8192 columns dividing the group's reduced row and shorter
// than it, one row tile per strip; offered when the group has no matmul and the split of each
// of its free-axis reductions is proved.
void add_streamed_tilings(std::vector<GroupTiling>& tilings, const ir::Kernel& k,
                          const std::vector<int>& group, const GroupExtent& extent,
                          const std::vector<SplitReduction>& splits);

// Appends copies of `tilings`' first (whole-row) tiling with a free tile of 512, 1024, .. `widest`
// columns dividing `cols` and shorter than it: one row tile per strip, no hoist, no spill (the
// free tiles of streamed reductions and of chunked scans).
void add_free_tilings(std::vector<GroupTiling>& tilings, std::int64_t cols, std::int64_t widest);

// True when `tiling` streams `group`'s reductions (a streamed tiling add_streamed_tilings
// offers: a free tile in a group with a free-axis reduction and no matmul).
bool streamed(const ir::Kernel& k, const std::vector<int>& group, const GroupTiling& tiling);

// The entry of `node` in `splits` that is proved, or null.
const SplitReduction* proved_split(const std::vector<SplitReduction>& splits, int node);

}  // namespace ts::lower

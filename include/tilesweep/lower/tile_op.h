// The tile-level form of one kernel op: the op applied to 2-D tiles [partition, free], which
// is what ISA instructions compute. Leading (batch) dims become loops around the tile; an
// operand that broadcasts across partitions is delivered whole by a broadcasting DMA, so its
// tile is the full [P, F]; one that broadcasts along the free dim stays [P, 1] (a per-partition
// scalar, as tensor_scalar and activation's bias take it). A reduction's tile keeps the reduced
// dim as 1 (instructions write 2-D tiles; dropping it is a view). Layout ops (slices, reshapes,
// concats, transposes of batch dims) are DMA access patterns, not instructions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tilesweep/ir/graph.h"

namespace ts::lower {

enum class OpClass { Compute, Layout, Constant, Input };

OpClass classify(const ir::Node& n);

// True for a value computed from constants only (a literal, a dim, sqrt(128.0)): folded to a
// number when the program is built, never lowered to instructions.
bool is_constant(const ir::Kernel& k, int node);

struct TileOp {
  ir::Kernel kernel;  // one op over 2-D (or smaller) tile parameters
  std::string key;    // canonical text: equal keys have the same lowerings
};

// nullopt (with `why`) when the node is not a compute op or its reduction axis is a batch dim
// other than the one just above the rows; a reduction along that one (frame.h, reduces_batch)
// has its per-slice step as tile op: its reducer's element-wise combine of the running value x
// and the slice y (add(x, y) for a sum).
// An op reading a position value (index_source.h: a mask) computes it inside its tile form,
// with the literal constants it reads (a mask's fill): those are no parameters of the tile op.
std::optional<TileOp> tile_op(const ir::Kernel& k, int node, std::string* why = nullptr);

// The inputs of `node` (indices into its inputs) that are its tile op's parameters, in order:
// all but the position values and literals an op reading a mask computes inside its tile form.
std::vector<int> tile_operands(const ir::Kernel& k, int node);

// The tile form of an element-wise op and the reduction that is its only user, as one kernel
// of two ops (what instruction fusion synthesizes a single instruction for, e.g.
// sum(square(x)) = activation_reduce). nullopt when the pair does not qualify.
std::optional<TileOp> pair_tile_op(const ir::Kernel& k, int producer, int consumer);

}  // namespace ts::lower

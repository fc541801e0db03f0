// Where a value's dims go in a loop nest, shared by the tile forms, fusion and materialization:
// the row (partition) dim, the free dim, and the batch dims before them; how each operand of a
// compute op is tiled. Shape-independent: decided on symbolic dims.
#pragma once

#include "tilesweep/ir/graph.h"
#include "tilesweep/lower/lowered.h"

namespace ts::lower {

// `row` is the dim laid across partitions and `col` the free dim (indices into the value's shape,
// -1 when absent: a per-row scalar has no col); every dim before the row is a batch dim, iterated
// by a loop.
struct Frame {
  int rank = 0;
  int row = -1, col = -1;
};

// NoProgram for an op the tiler cannot place (a reduction along a batch dim).
Lowered<Frame> find_frame(const ir::Kernel& k, int node);
// find_frame's frame, for a node known to have one (fusion_groups checked it); throws
// Unsupported otherwise.
Frame frame_of(const ir::Kernel& k, int node);

// A reduction across partitions (along its operand's row dim): its tile reads all the rows at
// once ([R, C], R <= 128) and writes one row; its own frame has no row dim beyond that one.
bool reduces_rows(const ir::Kernel& k, int node);

// A reduction along the batch dim just above its operand's rows (axis rank - 3, e.g. sum over S
// of [S, C, M]): loop-carried accumulation. Its nest loops over that dim innermost, inside the
// strip loop, and folds each slice into an on-chip running value (its tile op is the reducer's
// element-wise combine, tile_op.h); its own frame is its output's ([.., C, M]).
bool reduces_batch(const ir::Kernel& k, int node);

// How operand `i` of a compute node is tiled: with the node's rows (RowAligned), broadcast across
// rows (a [1, C] vector or a scalar), or by its own rows (a matmul's right-hand side, [K, N]).
enum class Role { RowAligned, Broadcast, MatmulRhs };
Role operand_role(const ir::Kernel& k, int node, int operand);

bool is_matmul(const ir::Node& n);

}  // namespace ts::lower

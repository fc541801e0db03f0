// Loop fusion (Axon §4.5): compute ops that share their batch dims and their row (partition)
// dim, where no op needs rows another op computes in the same strip, run in one loop nest —
// the fused group keeps the values between them on chip. Independent branches over the same
// rows (the RMS branch beside the matmul branch of RMSNorm + MatMul, three projections of one x)
// join too. Shape-independent: groups are decided on symbolic dims.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "tilesweep/ir/graph.h"

namespace ts::lower {

// A kernel (or one of its ops) has no program form yet; the reason says which op and why.
struct Unsupported : std::runtime_error {
  explicit Unsupported(const std::string& what, int node = -1) : std::runtime_error(what), node(node) {}
  int node;  // the kernel node whose lowering does not fit, when it is one op's
};

// Where a value's dims go in a loop nest: `row` is the dim laid across partitions and `col` the
// free dim (indices into the value's shape, -1 when absent: a per-row scalar has no col); every
// dim before the row is a batch dim, iterated by a loop.
struct Frame {
  int rank = 0;
  int row = -1, col = -1;
};

Frame frame_of(const ir::Kernel& k, int node);

// A reduction across partitions (along its operand's row dim): its tile reads all the rows at
// once ([R, C], R <= 128) and writes one row; its own frame has no row dim beyond that one.
bool reduces_rows(const ir::Kernel& k, int node);

// How operand `i` of a compute node is tiled: with the node's rows (RowAligned), broadcast across
// rows (a [1, C] vector or a scalar), or by its own rows (a matmul's right-hand side, [K, N]).
enum class Role { RowAligned, Broadcast, MatmulRhs };
Role operand_role(const ir::Kernel& k, int node, int operand);

bool is_matmul(const ir::Node& n);

// Fused groups of compute nodes in topological order (each group's nodes too). With `fuse`
// false every compute node is its own group. Throws Unsupported for an op the tiler cannot
// place (a reduction along a batch dim, a scan along rows).
std::vector<std::vector<int>> fusion_groups(const ir::Kernel& k, bool fuse);

}  // namespace ts::lower

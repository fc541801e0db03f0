// The second propagation round, on the ISA graph (Axon §4.5, Fig. 12): a matmul whose left
// operand is computed in the same loop nest lowers to nc_matmul(transpose(x), y), a transpose
// per tile. That transpose moves up past the element-wise ops that compute x (each commutes
// with transpose: proved) until it meets the matmuls producing their operands, where the
// instruction fusion transpose(nc_matmul(a, b)) = nc_matmul(b, a) (found by depth-1 synthesis)
// removes it: the chain is computed on transposed tiles and no transpose is left.
//
// This file finds where that applies (shape-independent) and builds the small kernels the
// round asks about; instruction_choices() runs the synthesis and the proofs.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/lower/tile_op.h"
#include "tilesweep/semantics/instr_spec.h"

namespace ts::lower {

// A matmul (`consumer`) whose left operand can arrive transposed: it is computed by the
// element-wise ops `chain` from the results of the matmuls `producers`, and read nowhere else.
// Every value involved is 2-D; chain operands are the chain's or producers' values, or scalars.
struct SwapSite {
  int consumer = -1;
  std::vector<int> producers;  // node order
  std::vector<int> chain;      // node order

  std::vector<int> transposed()
      const;  // producers and chain: the values computed transposed, sorted
};

std::vector<SwapSite> swap_sites(const ir::Kernel& k);

// matmul(transpose(x), y) over x [F, P], y [F, K]: the consumer's tile op once its left operand
// arrives transposed (what nc_matmul(x, y) computes).
TileOp transposed_use_op();

// transpose(root(a, b)) over the root instruction's operand shapes: what the instruction fusion
// synthesizes a single instruction for. nullopt when `root` is not a two-operand instruction
// without attributes that writes a 2-D tile.
std::optional<TileOp> transposed_root_op(const sem::InstrSpec& root);

// The two sides of "transpose commutes with element-wise node `node`": transpose(op(operands))
// and op(transpose(operands)), over [P, F] tiles (scalar operands stay scalars).
std::pair<ir::Kernel, ir::Kernel> commute_kernels(const ir::Kernel& k, int node);

// A matmul lowering split at its root instruction root(pre(x), y): `pre` is the program over x
// alone (e.g. nc_transpose_pe(x)), hoisted out of the matmul's N loop. nullopt when the root
// does not read y as it is, or reads x untouched.
struct SplitLowering {
  ir::Kernel pre;  // one parameter, x
  const sem::InstrSpec* root = nullptr;
  ir::Kernel root_program;  // the root instruction alone, over (a, y) with a = pre(x)
};
std::optional<SplitLowering> split_at_root(const ir::Kernel& lowering, const sem::InstrTable& isa);

// `root` (over its two operands a, b) with `a` computed by `pre` over x: the program a fused
// producer runs, over (x, y), for proving it against transpose(matmul(x, y)).
ir::Kernel compose(const ir::Kernel& pre, const ir::Kernel& root);

// transpose(matmul(x, y)) over x [P, F], y [F, K]: what a fused producer computes.
TileOp transposed_matmul_op();

}  // namespace ts::lower

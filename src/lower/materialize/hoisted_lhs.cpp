// Loop-invariant hoisting of a matmul's left operand (contract): the strip's x^T, computed by a
// program over x alone (`pre`, e.g. nc_transpose_pe(x), from split_at_root) once per (K tile,
// row tile) of the strip, in loops opened where the caller stands — before the loops that read
// it (the N loop of matmul_nest.cpp, the chunk loop of transposed_nest.cpp), which it does not
// depend on. The result stays resident for the strip: [k_tile, K / k_tile x S], K tile j at
// columns j x S. Matmuls of the nest that read the same x through the same pre share it.
#include <fmt/format.h>

#include "emission.h"
#include "tilesweep/ir/graph_edit.h"

namespace ts::lower {

Lowered<int> hoisted_lhs(Emission& e, Nest& nest, int node, std::int64_t k_tile,
                         const ir::Kernel& pre, Depth depth) {
  const ir::Node& n = e.kernel.nodes[node];
  int x = n.inputs[0];
  auto key = std::make_pair(x, ir::structural_hash(pre));
  if (auto it = nest.transposed_lhs.find(key); it != nest.transposed_lhs.end()) return it->second;
  std::int64_t K = e.shape(x).back(), S = nest.strip_rows(), rows = nest.tiling.pt;
  int buf = add_buffer(e, "xT", sem::Memory::Sbuf, n.dtype, {k_tile, K / k_tile * S}, depth);
  int k_loop = nest_loop(e, nest.body, "k", K / k_tile), k_var = loop_var(k_loop, nest.body);
  int rows_loop = nest_loop(e, k_loop, "rt", nest.tiling.block),
      row_tile = loop_var(rows_loop, k_loop);
  Lowered<Tile> x_tile = lhs_tile(e, nest, node, rows_loop, row_tile, k_var, k_tile);
  if (!x_tile) return x_tile.no_program();
  Tile dest{buf, window({{k_var, S}, {row_tile, rows}}, rows), {k_tile, rows}};
  Lowered<Tile> x_transposed =
      emit_lowering(e, rows_loop, node, {*x_tile}, &dest, -1, nest.strip_depth(), &pre);
  if (!x_transposed) return x_transposed.no_program();
  e.fusable_load = -1;
  nest.transposed_lhs[key] = buf;
  return buf;
}

}  // namespace ts::lower

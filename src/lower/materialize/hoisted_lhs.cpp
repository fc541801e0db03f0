// Loop-invariant hoisting of a matmul's left operand (contract): the strip's x^T, computed by a
// program over x alone (`pre`, e.g. nc_transpose_pe(x), from split_at_root) once per (K tile,
// row tile) of the strip, in loops opened where the caller stands — before the loops that read
// it (the N loop of matmul_nest.cpp, the chunk loop of transposed_nest.cpp), which it does not
// depend on. The result stays resident for the strip: [k_tile, K / k_tile x S], K tile j at
// columns j x S. Matmuls of the nest that read the same x through the same pre share it.
// An x read from HBM is loaded per row tile in runs of several K tiles (row_run_tiles), the pre
// reading each K tile's window: one [rows, k_tile] DMA per K tile would move runs of k_tile
// elements, which the DMA engines move far below their rate (512 B per partition in f32).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "emission.h"
#include "tilesweep/ir/graph_edit.h"

namespace ts::lower {

namespace {

// K tiles per DMA of a row tile of x: the fewest (a divisor of `tiles`) whose run of bytes per
// partition moves at the DMA efficiency of the whole row (the target's table); longer runs move
// no faster and hold more SBUF. The divisors come in increasing order from trial division up to
// the square root (a prime count of 2^31 - 1 K tiles takes 46,341 steps, not 2^31).
std::int64_t row_run_tiles(const target::Target& t, std::int64_t tiles, std::int64_t tile_bytes) {
  double whole = t.dma.efficiency_at(static_cast<double>(tiles * tile_bytes));
  auto fast = [&](std::int64_t j) {
    return j < tiles && t.dma.efficiency_at(static_cast<double>(j * tile_bytes)) >= whole;
  };
  std::vector<std::int64_t> cofactors;  // the divisors above the square root, decreasing
  for (std::int64_t j = 1; j <= tiles / j; ++j) {
    if (tiles % j != 0) continue;
    if (fast(j)) return j;
    if (j != tiles / j) cofactors.push_back(tiles / j);
  }
  for (auto it = cofactors.rbegin(); it != cofactors.rend(); ++it)
    if (fast(*it)) return *it;
  return tiles;
}

// True when an instruction of `pre` runs on the DMA engine only (dma_transpose): it fuses with
// the load of its whole tile (dma_transpose_fusion.cpp), so x is loaded tile by tile for it.
bool pre_is_dma(const target::Target& t, const ir::Kernel& pre) {
  return std::any_of(pre.nodes.begin(), pre.nodes.end(), [&](const ir::Node& n) {
    const sem::InstrSpec* spec = t.isa.find(n.op);
    return spec && spec->engines.size() == 1 && spec->engines[0] == sem::Engine::Dma;
  });
}

// x^T of an x read from HBM: per row tile, runs of K tiles loaded at once; the pre per K tile
// reads its window of the run.
Lowered<int> hoisted_from_hbm(Emission& e, Nest& nest, int node, std::int64_t k_tile,
                              const ir::Kernel& pre, int buf) {
  int x = e.kernel.nodes[node].inputs[0];
  std::int64_t K = e.shape(x).back(), S = nest.strip_rows(), rows = nest.tiling.pt;
  std::int64_t run =
      row_run_tiles(e.target, K / k_tile, k_tile * ir::dtype_bytes(e.kernel.nodes[x].dtype));
  int rows_loop = nest_loop(e, nest.body, "rt", nest.tiling.block),
      row_tile = loop_var(rows_loop, nest.body);
  int run_loop = nest_loop(e, rows_loop, "kr", K / k_tile / run),
      run_var = loop_var(run_loop, rows_loop);
  std::vector<Place> at = places(e, nest, node, e.shape(x), row_tile, run * k_tile);
  at.back().terms = {{run_var, run * k_tile}};
  Lowered<Tile> x_run = load(e, run_loop, x, at, {rows, run * k_tile}, nest.strip_depth());
  if (!x_run) return x_run.no_program();
  int k_loop = nest_loop(e, run_loop, "k", run), k_var = loop_var(k_loop, run_loop);
  Tile x_tile{x_run->buffer, window({{k_var, k_tile}}, k_tile), {rows, k_tile}};
  if (run == 1) x_tile.window = x_run->window;
  Tile dest{buf, window({{run_var, run * S}, {k_var, S}, {row_tile, rows}}, rows), {k_tile, rows}};
  Lowered<Tile> x_transposed =
      emit_lowering(e, k_loop, node, {x_tile}, &dest, -1, nest.strip_depth(), &pre);
  if (!x_transposed) return x_transposed.no_program();
  return buf;
}

}  // namespace

Lowered<int> hoisted_lhs(Emission& e, Nest& nest, int node, std::int64_t k_tile,
                         const ir::Kernel& pre, Depth depth) {
  const ir::Node& n = e.kernel.nodes[node];
  int x = n.inputs[0];
  auto key = std::make_pair(x, ir::structural_hash(pre));
  if (auto it = nest.transposed_lhs.find(key); it != nest.transposed_lhs.end()) return it->second;
  std::int64_t K = e.shape(x).back(), S = nest.strip_rows(), rows = nest.tiling.pt;
  int buf = add_buffer(e, "xT", sem::Memory::Sbuf, n.dtype, {k_tile, K / k_tile * S}, depth);
  if (!nest.values.count(x) && hbm_view(e, x) && !pre_is_dma(e.target, pre)) {
    Lowered<int> made = hoisted_from_hbm(e, nest, node, k_tile, pre, buf);
    if (!made) return made;
    e.fusable_load = -1;
    nest.transposed_lhs[key] = buf;
    return buf;
  }
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

// Panel loads (contract, GroupTiling::panel): a matmul's right-hand side y [.., K, N] that is an
// HBM tensor (not resident) loaded [K, W] column panel by panel, one DMA per K tile into a
// [k_tile, K / k_tile x W] buffer (K tile j at columns j x W), before the K loop that reads its
// [k_tile, tile] windows. A matmul computed transposed (transposed_nest.cpp) loads panels of
// rhs_panel_columns(N) spanning several of its 128-column chunks (longer DMA runs); one in a
// matmul nest (matmul_nest.cpp) loads one panel per N tile (every K tile's load in flight at once
// instead of one multi-buffered tile at a time).
#include "emission.h"

namespace ts::lower {

std::int64_t rhs_panel_columns(std::int64_t n) {
  std::int64_t chunk = largest_divisor(n, 128), widest = chunk;
  for (std::int64_t w = 2 * chunk; w <= std::min<std::int64_t>(n, 512); w *= 2)
    if (n % w == 0) widest = w;
  return widest;
}

bool loads_rhs_panel(const Emission& e, const Nest& nest, int node) {
  int y = e.kernel.nodes[node].inputs[1];
  return nest.tiling.panel && !nest.resident.count(y) && hbm_view(e, y);
}

Lowered<int> load_rhs_panel(Emission& e, const Nest& nest, int node, int block, const Terms& at,
                            std::int64_t width) {
  int y = e.kernel.nodes[node].inputs[1];
  const auto& shape = e.shape(y);
  std::int64_t K = shape[shape.size() - 2], k_tile = largest_divisor(K, 128);
  int buf = add_buffer(e, "w", sem::Memory::Sbuf, e.kernel.nodes[y].dtype,
                       {k_tile, K / k_tile * width}, {std::min(2, nest.tiling.bufs), 2});
  int k_loop = nest_loop(e, block, "k", K / k_tile), k_var = loop_var(k_loop, block);
  std::vector<Place> places = rhs_places(e, nest, node, k_var, k_tile, {at, width, 1});
  if (auto no = load_into(e, k_loop, y, places,
                          Tile{buf, window({{k_var, width}}, width), {k_tile, width}}))
    return *no;
  return buf;
}

}  // namespace ts::lower

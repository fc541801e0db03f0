// Wide stores (contract, GroupTiling::store): a matmul result that only goes to HBM is stored
// `store` columns at a time instead of one N tile (at most a PSUM bank) at a time. The N loop
// splits in two: an outer loop over stores, an inner one over the store's N tiles, each
// evacuated from PSUM into its columns of one SBUF tile [rows, block x store] (multi-buffered
// like the strip's tiles); after the inner loop each row tile's [rows, store] is stored with one
// DMA. Each DMA row then runs store x dtype bytes: fewer, longer DMAs (the target's efficiency
// table) for the same bytes. The SBUF tile is an ordinary buffer, so the capacity check counts
// it.
#include "emission.h"

namespace ts::lower {

NLoop open_n_loop(Emission& e, const Nest& nest, int node, std::int64_t n_tile, bool keep) {
  std::int64_t N = e.shape(node).back(), store = nest.tiling.store;
  NLoop n;
  n.tile = n_tile;
  n.store = n_tile;
  n.store_block = nest.body;
  if (!keep && store > n_tile && store % n_tile == 0 && N % store == 0) {
    n.store = store;
    n.store_block = nest_loop(e, nest.body, "ns", N / store);
    n.store_var = loop_var(n.store_block, nest.body);
    const ir::Node& x = e.kernel.nodes[node];
    n.store_buffer = add_buffer(e, "o", sem::Memory::Sbuf, x.dtype,
                                {nest.tiling.pt, nest.tiling.block * store}, nest.strip_depth());
    if (n.store_var >= 0) n.at.push_back({n.store_var, store});
  }
  n.block = nest_loop(e, n.store_block, "n", (n.wide() ? n.store : N) / n_tile);
  n.var = loop_var(n.block, n.store_block);
  if (n.var >= 0) n.at.push_back({n.var, n_tile});
  return n;
}

std::optional<NoProgram> store_wide(Emission& e, Nest& nest, int node, const NLoop& n) {
  if (!hbm_view(e, node)) return std::nullopt;
  int rows_loop = nest_loop(e, n.store_block, "rt", nest.tiling.block);
  int row_tile = loop_var(rows_loop, n.store_block);
  Tile from{n.store_buffer, row_window(nest, row_tile, n.store), {nest.tiling.pt, n.store}};
  auto at = places(e, nest, node, e.shape(node), row_tile, n.store);
  at.back().terms.clear();
  if (n.store_var >= 0) at.back().terms.push_back({n.store_var, n.store});
  return store(e, rows_loop, from, node, at);
}

}  // namespace ts::lower

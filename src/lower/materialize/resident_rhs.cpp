// The w-stationary loop order (contract, GroupTiling::resident): before the strip loop, inside the
// group's batch loops, each matmul of the nest whose right-hand side y [.., K, N] is an HBM tensor
// (a kernel input, a value of an earlier nest, a view of one) loads y whole, one DMA per K tile of
// [k_tile, N] into a resident [k_tile, K / k_tile x N] buffer (K tile j at columns j x N), and
// load_rhs (matmul_nest.cpp) reads its [k_tile, n_tile] windows instead of loading them per strip:
// y crosses HBM once per batch iteration instead of once per strip. Matmuls reading the same y
// share the buffer. A right-hand side computed in the nest is not resident (loaded per tile).
#include <fmt/format.h>

#include "emission.h"

namespace ts::lower {

namespace {

// True when some batch loop exists (the resident buffer is reloaded per batch iteration, so it
// is multi-buffered like a strip's; loaded once, one buffer).
bool batch_loops(const Nest& nest) {
  for (const Terms& terms : nest.batch)
    for (const auto& term : terms)
      if (term.first >= 0) return true;
  return false;
}

// y loaded whole for matmul `node`: one DMA per K tile, in a K loop opened in `block`.
std::optional<NoProgram> load_whole(Emission& e, Nest& nest, int node, int block) {
  int y = e.kernel.nodes[node].inputs[1];
  const auto& shape = e.shape(y);
  std::int64_t K = shape[shape.size() - 2], N = shape.back(), k_tile = largest_divisor(K, 128);
  Depth depth = batch_loops(nest) ? Depth{std::min(2, nest.tiling.bufs), 2} : Depth{1, 0};
  int buf = add_buffer(e, "w", sem::Memory::Sbuf, e.kernel.nodes[y].dtype, {k_tile, K / k_tile * N},
                       depth);
  int k_loop = nest_loop(e, block, "k", K / k_tile), k_var = loop_var(k_loop, block);
  std::vector<Place> at = rhs_places(e, nest, node, k_var, k_tile, {{}, N, 1});
  Tile dest{buf, window({{k_var, N}}, N), {k_tile, N}};
  if (auto no = load_into(e, k_loop, y, at, dest)) return no;
  nest.resident[y] = buf;
  return std::nullopt;
}

}  // namespace

std::optional<NoProgram> load_resident_rhs(Emission& e, Nest& nest, int block) {
  const auto& nodes = e.plan.groups[nest.group];
  for (int node : nodes) {
    if (!is_matmul(e.kernel.nodes[node])) continue;
    int y = e.kernel.nodes[node].inputs[1];
    if (nest.resident.count(y) || std::count(nodes.begin(), nodes.end(), y) || !hbm_view(e, y))
      continue;
    e.current_node = node;
    if (auto no = load_whole(e, nest, node, block)) return no;
  }
  return std::nullopt;
}

}  // namespace ts::lower

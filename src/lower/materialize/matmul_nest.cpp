// A matmul in its group's nest (contract): first its strip-long left operand where it has one (a
// stationary load, or x^T hoisted out of the N loop: GroupTiling::hoist); then loops over N tiles
// of `free` columns (at most 512) and K tiles of at most 128; the right-hand side tile [K tile,
// N tile] loaded once per (n, k) (or a window of the resident right-hand side,
// GroupTiling::resident, or of the N tile's panel, GroupTiling::panel) and used by every row
// tile of the strip; the products accumulated in PSUM over k, then evacuated per row tile — into
// the group's strip-long value when later ops read it (unless the tiling spills it), and to HBM
// when the value lives there (per N tile, or several N tiles side by side per store:
// GroupTiling::store, wide_store.cpp).
#include <fmt/format.h>

#include "emission.h"

namespace ts::lower {

namespace {

bool used_in_group(const Emission& e, const Nest& nest, int node) {
  for (int m : e.plan.groups[nest.group])
    for (int in : e.kernel.nodes[m].inputs)
      if (in == node) return true;
  return false;
}

// PSUM -> SBUF per row tile of N tile `n.at`, in the loop `block` over row tiles `row_tile`.
std::optional<NoProgram> evacuate(Emission& e, Nest& nest, int node, int accumulator,
                                  const NLoop& nl, int block, int row_tile) {
  const ir::Node& n = e.kernel.nodes[node];
  std::int64_t rows = nest.tiling.pt, N = e.shape(node).back(), n_tile = nl.tile;
  bool keep = used_in_group(e, nest, node);
  if (keep && nest.tiling.spill) {
    keep = false;
    spill(e, node);
  }
  Tile dest;
  if (keep) {
    int buf = add_buffer(e, n.label.empty() ? "mm" : n.label, sem::Memory::Sbuf, n.dtype,
                         {rows, nest.tiling.block * N}, {});
    dest = Tile{buf, row_window(nest, row_tile, N, nl.at, n_tile), {rows, n_tile}};
    if (nl.at.empty() && nest.tiling.block == 1) dest.window = {};
  } else if (nl.wide()) {  // an N tile of the wide store's tile (wide_store.cpp)
    dest = Tile{nl.store_buffer,
                row_window(nest, row_tile, nl.store, {{nl.var, n_tile}}, n_tile),
                {rows, n_tile}};
  } else {
    dest = Tile{add_buffer(e, "o", sem::Memory::Sbuf, n.dtype, {rows, n_tile}, nest.strip_depth()),
                {},
                {rows, n_tile}};
  }
  if (auto no = copy_tile(e, block, node,
                          Tile{accumulator, row_window(nest, row_tile, n_tile), {rows, n_tile}},
                          dest, "evacuate"))
    return no;
  if (keep) nest.values[node] = {dest.buffer, N};
  if (!hbm_view(e, node) || nl.wide()) return std::nullopt;
  auto at = places(e, nest, node, e.shape(node), row_tile, n_tile);
  at.back().terms = nl.at;
  return store(e, block, dest, node, at);
}

// The strip's stationary operand of a matmul whose left operand is a transposed view
// (OpPick::stationary): the view's source as it lies, [k_tile, K / k_tile x S] with K tile j at
// columns j x S, loaded once per strip: one DMA per K tile, [k_tile, S] (each reads runs of the
// strip's S rows along the rows' dim, no transpose; the strip's row tiles lie side by side both in
// HBM and in the buffer, so one DMA per row tile would only cut the runs to `pt`).
Lowered<int> stationary_strip(Emission& e, Nest& nest, int node, std::int64_t k_tile) {
  const ir::Node& n = e.kernel.nodes[node];
  int x = n.inputs[0];
  if (auto it = nest.stationary.find(x); it != nest.stationary.end()) return it->second;
  if (!hbm_view(e, x) || nest.values.count(x))
    return NoProgram{"a stationary left operand computed in the same loop nest", node};
  std::int64_t K = e.shape(x).back(), S = nest.strip_rows();
  int buf =
      add_buffer(e, "xs", sem::Memory::Sbuf, n.dtype, {k_tile, K / k_tile * S}, nest.strip_depth());
  int k_loop = nest_loop(e, nest.body, "k", K / k_tile), k_var = loop_var(k_loop, nest.body);
  std::vector<Place> at = places(e, nest, node, e.shape(x), -1, k_tile);  // the strip's rows
  at.back().terms = {{k_var, k_tile}};
  for (Place& p : at) {
    if (p.tile_dim == 0) p.extent = S;
    if (p.tile_dim >= 0) p.tile_dim = 1 - p.tile_dim;  // K on the partitions, the rows free
  }
  Tile dest{buf, window({{k_var, S}}, S), {k_tile, S}};
  if (auto no = load_into(e, k_loop, x, at, dest)) return *no;
  nest.stationary[x] = buf;
  return buf;
}

}  // namespace

Lowered<int> strip_lhs(Emission& e, Nest& nest, int node, std::int64_t k_tile, bool hoist) {
  const OpPick& pick = e.plan.picks.at(node);
  if (pick.stationary) return stationary_strip(e, nest, node, k_tile);
  if (hoist && pick.hoist_pre && !e.is_transposed(node))
    return hoisted_lhs(e, nest, node, k_tile, *pick.hoist_pre, {std::min(2, nest.tiling.bufs), 2});
  return -1;
}

std::optional<NoProgram> emit_matmul(Emission& e, Nest& nest, int node) {
  const ir::Node& n = e.kernel.nodes[node];
  int x = n.inputs[0];
  std::int64_t K = e.shape(x).back(), N = e.shape(node).back();
  std::int64_t k_tile = largest_divisor(K, 128);
  std::int64_t n_tile =
      nest.tiling.free > 0 ? std::min(nest.tiling.free, N) : std::min<std::int64_t>(N, 512);
  if (N % n_tile) n_tile = largest_divisor(N, n_tile);
  // A left operand that does not depend on the N loop is made for the strip before it.
  Lowered<int> strip = strip_lhs(e, nest, node, k_tile, nest.tiling.hoist);
  if (!strip) return strip.no_program();
  const bool hoisted = *strip >= 0 && !e.plan.picks.at(node).stationary;
  NLoop nl = open_n_loop(e, nest, node, n_tile, used_in_group(e, nest, node) && !nest.tiling.spill);
  int n_loop = nl.block;
  Lowered<int> panel = -1;  // the N tile's [K, n_tile] right-hand side (GroupTiling::panel)
  if (loads_rhs_panel(e, nest, node)) panel = load_rhs_panel(e, nest, node, n_loop, nl.at, n_tile);
  if (!panel) return panel.no_program();
  int k_loop = nest_loop(e, n_loop, "k", K / k_tile), k_var = loop_var(k_loop, n_loop);
  Lowered<Tile> rhs = *panel >= 0
                          ? Tile{*panel, window({{k_var, n_tile}}, n_tile), {k_tile, n_tile}}
                          : load_rhs(e, nest, node, k_loop, k_var, k_tile, nl.at, n_tile);
  if (!rhs) return rhs.no_program();
  int rows_loop = nest_loop(e, k_loop, "rt", nest.tiling.block),
      row_tile = loop_var(rows_loop, k_loop);
  auto it = nest.transposed.find(x);  // a value computed transposed: its chunks are the K tiles
  Lowered<Tile> lhs = Tile{};
  if (*strip >= 0 || it != nest.transposed.end())
    lhs = Tile{*strip >= 0 ? *strip : it->second.buffer,
               window({{k_var, nest.strip_rows()}, {row_tile, nest.tiling.pt}}, nest.tiling.pt),
               {k_tile, nest.tiling.pt}};
  else
    lhs = lhs_tile(e, nest, node, rows_loop, row_tile, k_var, k_tile);
  if (!lhs) return lhs.no_program();
  int accumulator =
      add_buffer(e, "acc", sem::Memory::Psum, n.dtype, {nest.tiling.pt, nest.tiling.block * n_tile},
                 {std::min(2, nest.tiling.bufs), 2});
  e.builder.buffer(accumulator).fills_psum = true;  // deepened at the end (psum_depth.cpp)
  Tile sum{accumulator, row_window(nest, row_tile, n_tile), {nest.tiling.pt, n_tile}};
  Lowered<Tile> product =
      emit_lowering(e, rows_loop, node, {*lhs, *rhs}, &sum, k_var, nest.strip_depth(),
                    hoisted ? e.plan.picks.at(node).hoist_root : nullptr);
  if (!product) return product.no_program();
  e.fusable_load = -1;
  int evacuate_loop = nest_loop(e, n_loop, "rt", nest.tiling.block);
  if (auto no =
          evacuate(e, nest, node, accumulator, nl, evacuate_loop, loop_var(evacuate_loop, n_loop)))
    return no;
  return nl.wide() ? store_wide(e, nest, node, nl) : std::nullopt;
}

std::vector<Place> rhs_places(const Emission& e, const Nest& nest, int node, int k_var,
                              std::int64_t k_tile, const Place& columns) {
  const auto& shape = e.shape(e.kernel.nodes[node].inputs[1]);
  std::vector<Place> at(shape.size());
  int lead = e.frame(node).rank - static_cast<int>(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    int od = static_cast<int>(d) + lead;
    if (d + 2 == shape.size())
      at[d] = {{{k_var, k_tile}}, k_tile, 0};
    else if (d + 1 == shape.size())
      at[d] = columns;
    else if (shape[d] != 1 && od >= 0)
      at[d].terms = nest.batch.at(od);
  }
  return at;
}

Lowered<Tile> load_rhs(Emission& e, const Nest& nest, int node, int block, int k_var,
                       std::int64_t k_tile, const Terms& n_at, std::int64_t n_tile) {
  int y = e.kernel.nodes[node].inputs[1];
  if (auto r = nest.resident.find(y); r != nest.resident.end()) {  // loaded before the strips
    Terms columns = {{k_var, e.shape(y).back()}};
    for (const auto& term : n_at) columns.push_back(term);
    return Tile{r->second, window(columns, n_tile), {k_tile, n_tile}};
  }
  std::vector<Place> at = rhs_places(e, nest, node, k_var, k_tile, {n_at, n_tile, 1});
  if (!hbm_view(e, y))
    return NoProgram{"a matmul's right-hand side computed in the same loop nest"};
  return load(e, block, y, at, {k_tile, n_tile}, nest.strip_depth());
}

Lowered<Tile> lhs_tile(Emission& e, const Nest& nest, int node, int block, int row_tile, int k_var,
                       std::int64_t k_tile) {
  int x = e.kernel.nodes[node].inputs[0];
  if (auto v = nest.values.find(x); v != nest.values.end()) {
    Tile t{v->second.buffer,
           row_window(nest, row_tile, v->second.cols, {{k_var, k_tile}}, k_tile),
           {nest.tiling.pt, k_tile}};
    if (k_var < 0 && nest.tiling.block == 1) t.window = {};
    return t;
  }
  auto at = places(e, nest, node, e.shape(x), row_tile, k_tile);
  at.back().terms = {{k_var, k_tile}};
  Lowered<Tile> t = load(e, block, x, at, {nest.tiling.pt, k_tile}, nest.strip_depth());
  if (t) e.fusable_load = t->buffer;
  return t;
}

}  // namespace ts::lower

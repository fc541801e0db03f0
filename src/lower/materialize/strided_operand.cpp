// On-chip steps (contract, GroupTiling::onchip_steps): an operand whose HBM view steps along the
// dim feeding its tile's columns (a slice x[:, a::s]) is a DMA of one-element runs when loaded as
// it is (DMA efficiency at 4 bytes: a few percent). Instead the columns its elements span are
// loaded contiguously — runs of the whole tile row — and the instruction reads every s-th of them
// through a window (Window::step, the engines' free-dim access pattern). The region starts at the
// view's first column rounded down to a multiple of s, so the slices x[:, 0::2] and x[:, 1::2]
// load the same region once (the run's `loads`) and read it at offsets 0 and 1. Moves s times
// the bytes where a region is not shared, holds s times the SBUF; both forms stay candidates.
// The same for a view repeating its column elements (np.repeat along the free axis): the
// distinct elements loaded contiguously, read through a repeating window (Window::repeat).
#include "emission.h"

namespace ts::lower {

namespace {

// The region a load covers: the view and the places, as numbers (equal keys: the same DMA).
std::vector<std::int64_t> region_key(const HbmView& v, const std::vector<Place>& at) {
  std::vector<std::int64_t> key = {v.buffer};
  key.insert(key.end(), v.base_offset.begin(), v.base_offset.end());
  for (const auto& d : v.dims)
    key.insert(key.end(), {d.base, d.offset, d.stride, d.broadcast ? 1 : 0, d.repeat, d.phase});
  for (const auto& p : at) {
    key.insert(key.end(), {-1, p.extent, p.tile_dim});
    for (const auto& [block, step] : p.terms) key.insert(key.end(), {block, step});
  }
  return key;
}

// Column dim `col` of view `v` repeats each element r times (np.repeat along the free axis): a DMA
// of one-element runs as it is (Access::repeat). Instead the tile's distinct elements are loaded
// contiguously (tile[1] / r columns) and read through a window repeating each column r times
// (Window::repeat, a stride-0 free-dim access pattern). Tiles aligned to the groups only.
std::optional<Lowered<Tile>> load_repeats_on_chip(Emission& e, int block, int value,
                                                  const HbmView& v, int col,
                                                  const std::vector<Place>& places,
                                                  const Shape& tile, Depth depth,
                                                  StridedLoads& loads) {
  const HbmDim& x = v.dims[static_cast<std::size_t>(col)];
  const std::int64_t r = x.repeat;
  if (x.phase != 0 || tile[1] % r != 0) return std::nullopt;
  std::vector<Place> at = places;
  Place& p = at[static_cast<std::size_t>(col)];
  for (auto& [b, s] : p.terms) {
    if (b >= 0 && s % r != 0) return std::nullopt;
    s /= r;
  }
  p.extent = tile[1] / r;
  HbmView narrow = v;
  narrow.dims[static_cast<std::size_t>(col)].repeat = 1;
  Window w;
  w.width = tile[1];
  w.repeat = r;
  auto key = region_key(narrow, at);
  if (auto it = loads.find(key); it != loads.end()) return Tile{it->second, w, tile};
  Lowered<Tile> t = load_view(e, block, value, narrow, at, {tile[0], p.extent}, depth);
  if (!t) return t;
  loads.emplace(std::move(key), t->buffer);
  return Tile{t->buffer, w, tile};
}

}  // namespace

std::optional<Lowered<Tile>> load_steps_on_chip(Emission& e, int block, int value,
                                                const std::vector<Place>& places, const Shape& tile,
                                                Depth depth, StridedLoads& loads) {
  const HbmView* v = hbm_view(e, value);
  if (!v || tile.size() != 2 || places.size() != v->dims.size()) return std::nullopt;
  int col = -1;  // the value dim feeding the tile's columns
  for (std::size_t d = 0; d < places.size(); ++d)
    if (places[d].tile_dim == 1) {
      if (col >= 0) return std::nullopt;  // merged dims: not one step
      col = static_cast<int>(d);
    }
  if (col < 0 || places[col].extent != tile[1]) return std::nullopt;
  const HbmDim& x = v->dims[static_cast<std::size_t>(col)];
  if (x.base >= 0 && !x.broadcast && x.repeat > 1)
    return load_repeats_on_chip(e, block, value, *v, col, places, tile, depth, loads);
  if (x.base < 0 || x.broadcast || x.repeat != 1 || x.stride <= 1 || x.offset < 0)
    return std::nullopt;
  const std::int64_t step = x.stride, skew = x.offset % step;
  HbmView wide = *v;
  wide.dims[static_cast<std::size_t>(col)].offset = x.offset - skew;
  wide.dims[static_cast<std::size_t>(col)].stride = 1;
  std::vector<Place> at = places;
  Place& p = at[static_cast<std::size_t>(col)];
  p.extent = tile[1] * step;
  std::int64_t end = x.offset - skew + p.extent;  // past the last column of the last region
  for (auto& [b, s] : p.terms) {
    s *= step;
    if (b >= 0) end += s * (e.builder.program().blocks[static_cast<std::size_t>(b)].trips - 1);
  }
  if (end > e.builder.buffer(v->buffer).shape[static_cast<std::size_t>(x.base)])
    return std::nullopt;
  Window w;
  w.width = tile[1];
  w.offset = skew;
  w.step = step;
  auto key = region_key(wide, at);
  if (auto it = loads.find(key); it != loads.end()) return Tile{it->second, w, tile};
  Lowered<Tile> t = load_view(e, block, value, wide, at, {tile[0], p.extent}, depth);
  if (!t) return t;
  loads.emplace(std::move(key), t->buffer);
  return Tile{t->buffer, w, tile};
}

}  // namespace ts::lower

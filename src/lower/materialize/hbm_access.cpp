// Building blocks: where a value's dims sit in the loop nest (Place), the DMA access pattern of
// an HBM view at those places, and windows of on-chip buffers. Values in, values out.
#include <fmt/format.h>

#include "emission.h"

namespace ts::lower {

namespace {

// The terms of a repeated dim where the tile stays inside one repeated element: element i of the
// value is element i // repeat of the operand. Loop terms whose step is a multiple of `repeat`
// keep step / repeat; the others, with the tile's own extent along the dim, must stay inside one
// repeated element (a batch loop split at its repeat count, group_nest.cpp, or a tile of at most
// `repeat` elements aligned to it), which then reads one element broadcast along the tile dim.
// False where the tile spans several repeated elements (repeated_access then).
bool inside_one_element(const Program& p, const HbmDim& x, const Place& place, Terms& out) {
  if (x.phase != 0) return false;
  std::int64_t inner = place.extent - 1;
  Terms terms;
  for (const auto& [block, step] : place.terms) {
    if (block < 0) continue;
    if (step % x.repeat == 0)
      terms.push_back({block, step / x.repeat * x.stride});
    else
      inner += step * (p.blocks[block].trips - 1);
  }
  if (inner >= x.repeat) return false;
  out = std::move(terms);
  return true;
}

// A tile spanning several repeated elements: a stride-0 access dim (Access::repeat) — the start
// in the value's (repeated) coordinates, tile position j reading operand element
// offset + stride * ((phase + start + j) // repeat).
void repeated_access(const HbmDim& x, const Place& place, std::size_t rank, Access& a) {
  if (a.repeat.empty()) {
    a.repeat.assign(rank, 1);
    a.base.assign(rank, 0);
  }
  auto d = static_cast<std::size_t>(x.base);
  a.repeat[d] = x.repeat;
  a.base[d] = x.offset;
  a.offset[d] = x.phase;
  for (const auto& [block, step] : place.terms)
    if (block >= 0) a.terms[d].push_back({block, step});
}

}  // namespace

HbmView identity_view(const Program& p, int buffer) {
  HbmView v;
  v.buffer = buffer;
  v.base_offset.assign(p.buffers[buffer].shape.size(), 0);
  for (std::size_t d = 0; d < p.buffers[buffer].shape.size(); ++d)
    v.dims.push_back({static_cast<int>(d), 0, 1, false});
  return v;
}

std::optional<NoProgram> hbm_access(const Emission& e, const HbmView& v,
                                    const std::vector<Place>& places, Access& a) {
  const Program& p = e.builder.program();
  std::size_t rank = p.buffers[v.buffer].shape.size();
  a.buffer = v.buffer;
  a.extent.assign(rank, 1);
  a.terms.assign(rank, {});
  a.tile_dim.assign(rank, -1);
  a.offset = v.base_offset;
  a.stride.assign(rank, 1);
  a.repeat.clear();
  a.base.clear();
  for (std::size_t d = 0; d < v.dims.size(); ++d) {
    const HbmDim& x = v.dims[d];
    if (x.base < 0 || x.broadcast) continue;
    const Place& place = places[d];
    a.offset[x.base] = x.offset;
    a.stride[x.base] = x.stride;
    a.extent[x.base] = place.extent;
    a.tile_dim[x.base] = place.tile_dim;
    if (x.repeat > 1) {
      if (inside_one_element(p, x, place, a.terms[x.base])) {
        a.extent[x.base] = 1;  // one element, broadcast along a tile dim (no buffer dim feeds it)
        a.tile_dim[x.base] = -1;
      } else {
        repeated_access(x, place, rank, a);
      }
      continue;
    }
    for (const auto& [block, step] : place.terms)
      if (block >= 0) a.terms[x.base].push_back({block, step * x.stride});
  }
  return std::nullopt;
}

Window row_window(const Nest& nest, int row_tile, std::int64_t cols, Terms extra,
                  std::int64_t width) {
  Window w;
  if (row_tile >= 0) w.terms.push_back({row_tile, cols});
  for (auto& t : extra)
    if (t.first >= 0) w.terms.push_back(t);
  w.width = width ? width : (nest.tiling.block > 1 || !extra.empty() ? cols : 0);
  return w;
}

Window window(const Terms& terms, std::int64_t width) {
  Window w;
  for (const auto& t : terms)
    if (t.first >= 0) w.terms.push_back(t);
  w.width = width;
  return w;
}

std::vector<Place> places(const Emission& e, const Nest& nest, int node,
                          const std::vector<std::int64_t>& shape, int row_tile,
                          std::int64_t col_extent) {
  return places(nest, e.frame(node), e.shape(node), shape, row_tile, col_extent);
}

std::vector<Place> places(const Nest& nest, const Frame& f, const std::vector<std::int64_t>& out,
                          const std::vector<std::int64_t>& shape, int row_tile,
                          std::int64_t col_extent) {
  std::vector<Place> result(shape.size());
  int lead = f.rank - static_cast<int>(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    int od = static_cast<int>(d) + lead;  // the output dim above it
    // (A batch dim of 1 is read at 0 also where the output has a 1 there: a value broadcast
    // along a dim its nest loops over, fusion.cpp.)
    bool broadcast = shape[d] == 1 && od >= 0 && (out[od] != 1 || (od != f.row && od != f.col));
    if (broadcast) continue;
    if (od == f.row) {
      result[d].terms = {{nest.strip, nest.strip_rows()}, {row_tile, nest.tiling.pt}};
      result[d].extent = nest.tiling.pt;
      result[d].tile_dim = 0;
    } else if (od == f.col) {
      if (nest.free_loop >= 0) result[d].terms = {{nest.free_loop, nest.free_tile}};
      result[d].extent = col_extent;
      result[d].tile_dim = 1;
    } else if (od >= 0 && od < static_cast<int>(nest.batch.size())) {
      result[d].terms = nest.batch[od];
    }
  }
  return result;
}

}  // namespace ts::lower

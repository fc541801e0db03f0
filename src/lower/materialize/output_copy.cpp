// Pass (after every group's nest, contract): each output the HBM layout copies (Prefix::copies: a
// slice, a broadcast, a view of a value other ops also read) is copied in a loop nest of its own,
// tile by tile through SBUF: a DMA load through the view of the value's HBM tensor, a DMA store
// into the output's tensor. The value's stores (earlier nests) come first; the simulator orders
// the loads after them through the tensor. Two DMAs per tile, no engine work.
#include <fmt/format.h>

#include <numeric>

#include "emission.h"

namespace ts::lower {

namespace {

// Columns per copy tile at most: 16 KiB of f32 per partition, two copies in flight.
constexpr std::int64_t kCopyCols = 4096;

std::optional<NoProgram> copy_dma(Emission& e, int block, const HbmView& v,
                                  const std::vector<Place>& at, const Tile& tile, ir::DType dt,
                                  bool store) {
  Lowered<Inst*> made = make_inst(e, Common::DmaCopy, {tile.shape}, tile.shape, dt, {});
  if (!made) return made.no_program();
  Inst& in = **made;
  if (auto no = hbm_access(e, v, at, in.hbm)) return no;
  in.dma = true;
  in.store = store;
  if (store) {
    in.in = {tile.buffer};
    in.in_window = {tile.window};
  } else {
    in.out = tile.buffer;
  }
  if (e.plan.notes)
    in.note =
        fmt::format("{} {}", store ? "copy to" : "copy from", e.builder.buffer(in.hbm.buffer).name);
  int id = e.builder.place(block, in);
  if (!store) e.load_of.push_back({tile.buffer, id});
  return std::nullopt;
}

// The loops of one copy: a loop per dim, column tiles of the last, row tiles (partitions) of the
// leading dim whose tile fills the most partitions (the last such dim: [T, H, D] with H = 4
// copies T = 256 rows over the partitions, not H); the places of each dim at the innermost.
std::optional<NoProgram> emit_copy(Emission& e, const CopiedOutput& c) {
  const std::vector<std::int64_t>& shape = c.shape;
  if (shape.empty())
    return NoProgram{
        fmt::format("output '{}' is a scalar view: nothing copies it yet", e.describe(c.node))};
  std::size_t rank = shape.size();
  std::size_t cols = rank - 1;
  // (a tile along a repeated dim reads it through a repeated access dim, hbm_access.cpp)
  auto extent = [&](std::size_t d, std::int64_t limit) { return largest_divisor(shape[d], limit); };
  std::optional<std::size_t> rows;
  std::int64_t pt = 1;
  for (std::size_t d = 0; d + 1 < rank; ++d)
    if (std::int64_t t = extent(d, e.target.sbuf.partitions); !rows || t >= pt) {
      rows = d;
      pt = t;
    }
  std::int64_t ft = extent(cols, kCopyCols);
  std::vector<Place> at(rank);
  int block = 0;
  for (std::size_t d = 0; d < rank; ++d) {
    std::int64_t tile = d == cols ? ft : (rows && d == *rows ? pt : 1);
    int inner = nest_loop(e, block, fmt::format("c{}", d), shape[d] / tile);
    if (int var = loop_var(inner, block); var >= 0) at[d].terms = {{var, tile}};
    at[d].extent = tile;
    at[d].tile_dim = d == cols ? 1 : (rows && d == *rows ? 0 : -1);
    block = inner;
  }
  ir::DType dt = e.kernel.nodes[c.node].dtype;
  Tile tile{add_buffer(e, "copy", sem::Memory::Sbuf, dt, {pt, ft}, {2, 0}), {}, {pt, ft}};
  if (auto no = copy_dma(e, block, c.from, at, tile, dt, false)) return no;
  return copy_dma(e, block, c.to, at, tile, dt, true);
}

}  // namespace

std::optional<NoProgram> emit_output_copies(Emission& e) {
  for (const CopiedOutput& c : e.prefix.copies) {
    e.nest = static_cast<int>(e.plan.groups.size() + (&c - e.prefix.copies.data()));
    if (auto no = emit_copy(e, c)) return no;
  }
  return std::nullopt;
}

}  // namespace ts::lower

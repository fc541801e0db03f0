// Partition broadcasts on the PE (GroupTiling::pe_broadcast): an HBM operand that is one row
// broadcast across the tile's partitions is loaded as that row, [1, W] (one contiguous run, where
// the broadcasting DMA writes the row into each of the pt partitions), and broadcast by the
// Tensor engine: nc_matmul of a ones stationary [1, pt] and the row as its moving operand,
//
//   out[i, j] = sum over k < 1 of ones[k, i] * row[k, j] = row[0, j]
//
// (the instruction's own expression at K = 1; the equality is proved by Z3 in
// tests/lower/pe_broadcast_test.cpp), into a PSUM tile [pt, W], one matmul per moving-operand
// limit of columns (512: one PSUM bank of fp32). Its readers read PSUM: a Vector tensor_tensor
// with its other input in SBUF runs at one element per cycle instead of two (S0).
#include <fmt/format.h>

#include <algorithm>

#include "emission.h"

namespace ts::lower {

bool broadcast_across_partitions(const std::vector<Place>& places, const Shape& tile) {
  return tile.size() == 2 && tile[0] > 1 &&
         std::none_of(places.begin(), places.end(), [](const Place& p) { return p.tile_dim == 0; });
}

Lowered<Tile> load_broadcast_on_pe(Emission& e, int block, int value,
                                   const std::vector<Place>& places, const Shape& tile,
                                   Depth depth) {
  const sem::InstrSpec* matmul = e.target.isa.find("nc_matmul");
  if (!matmul)
    return NoProgram{fmt::format("target '{}' has no 'nc_matmul' instruction", e.target.name)};
  const ir::DType dt = e.kernel.nodes[value].dtype;
  const std::int64_t rows = tile[0], cols = tile[1];
  Lowered<Tile> row = load(e, block, value, places, {1, cols}, depth);
  if (!row) return row.no_program();
  Lowered<int> ones = constant_tile(e, 1.0, {1, rows}, dt);
  if (!ones) return ones.no_program();
  // PSUM holds fp32 whatever the operands' dtype (the matmul accumulates in fp32).
  int out = add_buffer(e, "bcast", sem::Memory::Psum, ir::DType::F32, tile, depth);
  auto limit = matmul->limits.find("n");
  const std::string name = e.builder.buffer(hbm_view(e, value)->buffer).name;
  const std::int64_t piece = limit == matmul->limits.end() ? cols : std::min(cols, limit->second);
  for (std::int64_t at = 0; at < cols; at += piece) {
    const std::int64_t width = std::min(piece, cols - at);
    Lowered<Inst*> made = make_inst(e, matmul, {{1, rows}, {1, width}}, {rows, width}, dt, {});
    if (!made) return made.no_program();
    Inst& in = **made;
    in.in = {*ones, row->buffer};
    Window w;
    if (width < cols) w = Window{{}, width, at};
    in.in_window = {Window{}, w};
    in.out = out;
    in.out_window = w;
    if (e.plan.notes) in.note = "broadcast " + name + " across partitions";
    e.builder.place(block, in);
  }
  return Tile{out, {}, tile};
}

}  // namespace ts::lower

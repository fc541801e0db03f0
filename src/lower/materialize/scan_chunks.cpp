// Chunked scans (chunked_scan.h): in a nest whose rows are cut into chunks of `free_tile`
// columns, a scan along the free axis runs its proved chunk step per chunk. Its state ([pt, 1],
// one copy: it carries from one trip of the chunk loop to the next) is zeroed before the chunk
// loop; each chunk's step reads it as its start, and the chunk's last column is copied back into
// it for the next chunk. Nothing of the row goes through HBM and no row is ever whole on chip.
#include <fmt/format.h>

#include "emission.h"
#include "row_ops.h"

namespace ts::lower {

namespace {

// The state's zero before the chunk loop (in the block around it, ahead of the loop).
std::optional<NoProgram> start_state(Emission& e, const Nest& nest, int node, int buffer,
                                     const Shape& shape, ir::DType dt) {
  Lowered<Inst*> made = make_inst(e, Common::Memset, {}, shape, dt, {node, true});
  if (!made) return made.no_program();
  Inst& in = **made;
  in.out = buffer;
  in.attrs = {{"value", 0.0}, {"P", sem::Dim(shape[0])}, {"F", sem::Dim(shape[1])}};
  if (e.plan.notes) in.note = fmt::format("state of {} starts at 0", e.describe(node));
  e.builder.place(nest.chunk_block, in);
  auto& items = e.builder.program().blocks[static_cast<std::size_t>(nest.chunk_block)].items;
  Item item = items.back();
  items.pop_back();
  items.insert(items.begin() + static_cast<std::ptrdiff_t>(nest.chunk_at), item);
  return std::nullopt;
}

}  // namespace

std::optional<NoProgram> RowOps::chunk(int node) {
  const ir::Node& n = e.kernel.nodes[node];
  const OpPick& pick = e.plan.picks.at(node);
  if (!pick.chunk) return NoProgram{fmt::format("'{}' has no proved chunk step", n.op), node};
  std::int64_t pt = nest.tiling.pt, cols = nest.free_tile;
  Lowered<std::vector<Tile>> operands = operands_of(node);
  if (!operands) return operands.no_program();
  std::string name = n.label.empty() ? "v" : n.label;
  int state = add_buffer(e, name + "_state", sem::Memory::Sbuf, n.dtype, {pt, 1}, Depth{1, 0});
  e.current_node = node;
  if (auto no = start_state(e, nest, node, state, {pt, 1}, n.dtype)) return no;
  Tile start{state, {}, {pt, 1}};
  operands->push_back(start);
  int buf = value_buffer(e, nest, name, sem::Memory::Sbuf, n.dtype, {pt, nest.tiling.block * cols},
                         nest.strip_depth());
  Tile dest{buf, row_window(nest, row_tile, cols), {pt, cols}};
  Lowered<Tile> out =
      emit_lowering(e, block, node, *operands, &dest, -1, nest.strip_depth(), pick.chunk);
  if (!out) return out.no_program();
  // The chunk's last column: the next chunk's start.
  Window last = out->window;
  last.offset += out->shape[1] - 1;
  last.width = 1;
  if (auto no =
          copy_tile(e, block, node, Tile{out->buffer, last, {pt, 1}}, start, "carry", "'s state"))
    return no;
  nest.values[node] = {buf, cols};
  if (!stores || !e.prefix.views[static_cast<std::size_t>(node)]) return std::nullopt;
  return store(e, block, *out, node, places(e, nest, node, e.shape(node), row_tile, cols));
}

}  // namespace ts::lower

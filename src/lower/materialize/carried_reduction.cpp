// Reductions along a batch dim (frame.h, reduces_batch; issue 17, loop-carried accumulation):
// the nest loops over the reduced dim innermost, inside the strip loop (group_nest.cpp). Per
// strip, the running value ([pt, block x cols], one copy) starts at the reducer's identity (a
// memset before that loop); each iteration folds its slice in with the reduction's step lowering
// (the reducer's element-wise combine, tile_op.h), writing the running value in place; after the
// loop it is stored once. Nothing of the reduced operand goes through HBM. With psum_partials
// (GroupTiling) the slice, an element-wise value only the reductions read, is written to PSUM:
// the fold reads one input from each memory, which S0 runs at one element per cycle.
#include <fmt/format.h>

#include <algorithm>

#include "emission.h"
#include "row_ops.h"
#include "tilesweep/lower/split_reduction.h"

namespace ts::lower {

namespace {

// A memset of `buffer` ([rows, cols]) to `value`, placed in the carrying block just before the
// carried loop.
std::optional<NoProgram> start_running(Emission& e, const Nest& nest, int buffer, double value,
                                       const Shape& shape, ir::DType dt) {
  Lowered<Inst*> made = make_inst(e, Common::Memset, {}, shape, dt, {});
  if (!made) return made.no_program();
  Inst& in = **made;
  in.out = buffer;
  in.attrs = {{"value", value}, {"P", sem::Dim(shape[0])}, {"F", sem::Dim(shape[1])}};
  if (e.plan.notes) in.note = fmt::format("running {} = {}", e.describe(e.current_node), value);
  e.builder.place(nest.carry, in);
  auto& items = e.builder.program().blocks[static_cast<std::size_t>(nest.carry)].items;
  Item item = items.back();
  items.pop_back();
  items.insert(items.begin() + static_cast<std::ptrdiff_t>(nest.carried), item);
  return std::nullopt;
}

}  // namespace

bool RowOps::partial_in_psum(int node) const {
  const ir::Node& n = e.kernel.nodes[node];
  if (!nest.tiling.psum_partials || n.dtype != ir::DType::F32 ||
      e.prefix.views[static_cast<std::size_t>(node)] ||
      e.prefix.has_axis[static_cast<std::size_t>(node)])
    return false;
  bool read = false;
  for (std::size_t r = 0; r < e.kernel.nodes.size(); ++r) {
    const auto& in = e.kernel.nodes[r].inputs;
    if (std::find(in.begin(), in.end(), node) == in.end()) continue;
    if (e.prefix.group_of[r] != nest.group || !reduces_batch(e.kernel, static_cast<int>(r)) ||
        e.plan.absorbed.count(static_cast<int>(r)))
      return false;
    read = true;
  }
  return read && std::find(e.kernel.outputs.begin(), e.kernel.outputs.end(), node) ==
                     e.kernel.outputs.end();
}

std::optional<NoProgram> RowOps::carry(int node) {
  const ir::Node& n = e.kernel.nodes[node];
  if (nest.carry < 0) throw InternalError("a batch reduction outside a nest that carries it");
  std::optional<double> identity = running_identity(n);
  if (!identity) return NoProgram{fmt::format("'{}' has no running identity", n.op), node};
  std::int64_t cols = cols_of(node);
  // In a nest that cuts rows into chunks (chunked_scan.h) the running value keeps whole rows and
  // each chunk folds into its own columns.
  const bool chunked = chunks(node);
  Frame f = e.frame(node);
  std::int64_t row = chunked ? e.shape(node)[static_cast<std::size_t>(f.col)] : cols;
  Lowered<Tile> slice = operand(node, 0, n.dtype);
  if (!slice) return slice.no_program();
  Shape whole = {nest.tiling.pt, nest.tiling.block * row};
  int running = add_buffer(e, n.label.empty() ? "acc" : n.label, sem::Memory::Sbuf, n.dtype, whole,
                           Depth{1, 0});
  e.current_node = node;
  if (auto no = start_running(e, nest, running, *identity, whole, n.dtype)) return no;
  Tile acc{running,
           chunked ? row_window(nest, row_tile, row, {{nest.free_loop, cols}}, cols)
                   : row_window(nest, row_tile, cols),
           {nest.tiling.pt, cols}};
  Lowered<Tile> out = emit_lowering(e, block, node, {acc, *slice}, &acc, -1, nest.strip_depth());
  if (!out) return out.no_program();
  if (!e.prefix.views[static_cast<std::size_t>(node)]) return std::nullopt;
  // After the carried loop: each row tile of the running value stored.
  // After the carried loop: each row tile of the running value stored (whole rows: outside the
  // chunk loop).
  int rt = nest_loop(e, nest.carry, "rt", nest.tiling.block);
  int rt_var = loop_var(rt, nest.carry);
  Nest rows = nest;
  rows.free_loop = -1;
  rows.free_tile = 0;
  auto at = places(e, rows, node, e.shape(node), rt_var, row);
  std::size_t rank = e.shape(node).size();
  if (rank == e.shape(n.inputs[0]).size()) at[rank - 3].terms.clear();  // keepdims: a dim of 1
  return store(e, rt, Tile{running, row_window(nest, rt_var, row), {nest.tiling.pt, row}}, node,
               at);
}

}  // namespace ts::lower

// In-place writes (contract, GroupTiling::in_place): a row-wise op writes its result over one of
// its operand tiles instead of into a buffer of its own, where
//   - the nest reads its values in program order (buffer_reuse.cpp plans their last readers;
//     a streamed nest or one with values computed transposed has no plan: nothing in place),
//   - the op's root instruction (the last of its lowering, the one writing the result) reads
//     that tile element-wise in every operand it reads it through (sem::InstrSpec::
//     elementwise_operand: its pattern is the output's and it is read only at the output's
//     element), so each element is read before it is overwritten; the lowering's earlier
//     instructions read it before the root runs (the simulator orders the write after them),
//   - no later op of the group reads the operand (a value of the nest past its last reader, or
//     an HBM operand loaded for the run that no later op loads again), and
//   - the tile is what a buffer of the op's own would be: SBUF, the op's dtype, the same shape
//     and window. Its multi-buffering depth may differ (a matmul result kept for the strip has
//     one copy): the result then lives in the operand's copies, as the hardware's in-place
//     write does, and the next write of them waits for its readers.
// The operand's tile then holds the result: the nest's value (or the run's load) is forgotten,
// so buffer reuse never hands the buffer to another value while the result lives in it.
#include <algorithm>

#include "row_ops.h"

namespace ts::lower {

namespace {

bool same_window(const Window& a, const Window& b) {
  return a.terms == b.terms && a.width == b.width && a.offset == b.offset && a.step == b.step;
}

// The operand indices (into the op's operand tiles) the root instruction of `lowering` may
// overwrite: read by it directly, element-wise in every position reading them. Empty when the
// root is no instruction of the target, a DMA, or not the lowering's last instruction.
std::vector<int> overwritable_operands(const ir::Kernel& lowering, const target::Target& t) {
  int root = lowering.outputs.at(0);
  const ir::Node& step = lowering.nodes[static_cast<std::size_t>(root)];
  const sem::InstrSpec* spec = t.isa.find(step.op);
  if (!spec || std::count(spec->engines.begin(), spec->engines.end(), sem::Engine::Dma)) return {};
  for (std::size_t m = static_cast<std::size_t>(root) + 1; m < lowering.nodes.size(); ++m)
    if (t.isa.find(lowering.nodes[m].op)) return {};
  std::vector<int> ok, bad;
  for (std::size_t j = 0; j < step.inputs.size(); ++j) {
    const ir::Node& in = lowering.nodes[static_cast<std::size_t>(step.inputs[j])];
    if (in.param < 0) continue;
    bool elementwise = j < spec->elementwise_operand.size() && spec->elementwise_operand[j];
    (elementwise ? ok : bad).push_back(in.param);
  }
  std::erase_if(ok, [&](int k) { return std::count(bad.begin(), bad.end(), k) > 0; });
  return ok;
}

}  // namespace

bool RowOps::read_after(int in, std::size_t position) const {
  const auto& nodes = e.plan.groups[nest.group];
  for (int m : nodes) {
    const auto& inputs = e.kernel.nodes[m].inputs;
    if (std::count(inputs.begin(), inputs.end(), in) && emitted_at(e, nodes, m) > position)
      return true;
  }
  return false;
}

std::optional<Tile> RowOps::in_place_dest(int node, const std::vector<Tile>& operands,
                                          ir::DType dtype, const Shape& buffer_shape,
                                          const Tile& own, sem::Memory memory) {
  // (A partial in PSUM always takes a dead PSUM operand's tile: PSUM's few banks are the point.)
  if ((!nest.tiling.in_place && memory == sem::Memory::Sbuf) || nest.last_read.empty())
    return std::nullopt;
  const auto& nodes = e.plan.groups[nest.group];
  std::size_t position = emitted_at(e, nodes, node);
  const ir::Kernel* lowering = e.plan.picks.at(node).lowering;
  if (!lowering) return std::nullopt;
  for (int k : overwritable_operands(*lowering, e.target)) {
    const Tile& t = operands.at(static_cast<std::size_t>(k));
    if (t.buffer < 0) continue;
    const Buffer& b = e.builder.buffer(t.buffer);
    if (b.memory != memory || b.constant || b.dtype != dtype || t.shape != own.shape ||
        !std::equal(b.shape.begin(), b.shape.end(), buffer_shape.begin(), buffer_shape.end()))
      continue;
    // A value of the nest past its last reader.
    auto v = std::find_if(nest.values.begin(), nest.values.end(),
                          [&](const auto& x) { return x.second.buffer == t.buffer; });
    if (v != nest.values.end()) {
      auto last = nest.last_read.find(v->first);
      if (last == nest.last_read.end() || last->second != position ||
          !same_window(t.window, own.window))
        continue;
      nest.values.erase(v);
      return Tile{t.buffer, own.window, own.shape};
    }
    // An HBM operand loaded for this run (whole tile of the row tile) that no later op reads.
    auto l = std::find_if(loaded.begin(), loaded.end(),
                          [&](const auto& x) { return x.second.buffer == t.buffer; });
    if (l == loaded.end() || !t.window.whole() || nest.tiling.block != 1 ||
        read_after(l->first, position))
      continue;
    loaded.erase(l);
    return Tile{t.buffer, own.window, own.shape};
  }
  return std::nullopt;
}

}  // namespace ts::lower

#include "tilesweep/lower/frame.h"

#include <fmt/format.h>

#include "tilesweep/lower/tile_op.h"

namespace ts::lower {

bool is_matmul(const ir::Node& n) { return n.op == "matmul"; }

namespace {

bool is_one(const sem::Dim& d) { return d.is_const() && d.value() == 1; }

const sem::AttrValue* attr(const ir::Node& n, const char* name) {
  auto it = n.attrs.find(name);
  return it == n.attrs.end() ? nullptr : &it->second;
}

}  // namespace

bool reduces_rows(const ir::Kernel& k, int node) {
  const ir::Node& n = k.nodes[node];
  if (classify(n) != OpClass::Compute || n.spec->contract.empty() || is_matmul(n)) return false;
  const sem::AttrValue* axis = attr(n, "axis");
  auto rank = static_cast<std::int64_t>(k.nodes[n.inputs[0]].shape.size());
  return axis && rank >= 2 && std::get<std::int64_t>(*axis) == rank - 2;
}

bool reduces_batch(const ir::Kernel& k, int node) {
  const ir::Node& n = k.nodes[node];
  if (classify(n) != OpClass::Compute || n.spec->contract.empty() || is_matmul(n)) return false;
  const sem::AttrValue* axis = attr(n, "axis");
  auto rank = static_cast<std::int64_t>(k.nodes[n.inputs[0]].shape.size());
  return axis && rank >= 3 && std::get<std::int64_t>(*axis) == rank - 3;
}

Lowered<Frame> find_frame(const ir::Kernel& k, int node) {
  const ir::Node& n = k.nodes[node];
  Frame f;
  f.rank = static_cast<int>(n.shape.size());
  if (f.rank >= 2) f.row = f.rank - 2, f.col = f.rank - 1;
  if (f.rank == 1) f.col = 0;
  if (classify(n) != OpClass::Compute || is_matmul(n)) return f;
  const sem::AttrValue* axis = attr(n, "axis");
  if (!axis) return f;
  const ir::Node& in = k.nodes[n.inputs[0]];
  auto a = std::get<std::int64_t>(*axis);
  if (reduces_batch(k, node)) return f;  // the output's rows and columns
  if (reduces_rows(k, node)) {
    // One row left: kept as a row of 1 (keepdims), or none, the free dim last.
    if (n.shape.size() < in.shape.size()) f.row = -1, f.col = f.rank - 1;
    return f;
  }
  if (a != static_cast<std::int64_t>(in.shape.size()) - 1)
    return NoProgram{fmt::format(
        "'{}' along axis {} of a rank-{} tensor: only the last (free) axis is tiled so far", n.op,
        a, in.shape.size())};
  if (n.shape.size() < in.shape.size()) {  // reduced without keepdims: the old row is now last
    f.row = f.rank - 1;
    f.col = -1;
  }
  return f;
}

Frame frame_of(const ir::Kernel& k, int node) { return find_frame(k, node).value(); }

Role operand_role(const ir::Kernel& k, int node, int operand) {
  const ir::Node& n = k.nodes[node];
  if (is_matmul(n)) return operand == 0 ? Role::RowAligned : Role::MatmulRhs;
  if (attr(n, "axis")) return Role::RowAligned;
  Frame out = frame_of(k, node);
  const auto& s = k.nodes[n.inputs[operand]].shape;
  if (out.row < 0) return s.empty() ? Role::Broadcast : Role::RowAligned;
  // Right-aligned broadcasting: the operand's dim under the output's row.
  int d = out.row - (out.rank - static_cast<int>(s.size()));
  if (d < 0 || is_one(s[d]))
    return is_one(n.shape[out.row]) && d >= 0 ? Role::RowAligned : Role::Broadcast;
  return Role::RowAligned;
}

}  // namespace ts::lower

#include "tilesweep/lower/fusion.h"

#include <algorithm>

#include "tilesweep/lower/tile_op.h"

namespace ts::lower {

bool is_matmul(const ir::Node& n) { return n.op == "matmul"; }

namespace {

bool is_one(const sem::Dim& d) { return d.is_const() && d.value() == 1; }

const sem::AttrValue* attr(const ir::Node& n, const char* name) {
  auto it = n.attrs.find(name);
  return it == n.attrs.end() ? nullptr : &it->second;
}

// The row dim of a value, as a Dim (1 when it has none), and its batch dims.
std::vector<sem::Dim> row_key(const ir::Kernel& k, int node) {
  Frame f = frame_of(k, node);
  const auto& s = k.nodes[node].shape;
  std::vector<sem::Dim> key;
  int batch_end = f.row >= 0 ? f.row : (f.col >= 0 ? f.col : f.rank);
  for (int d = 0; d < batch_end; ++d) key.push_back(s[d]);
  key.push_back(f.row >= 0 ? s[f.row] : sem::Dim(1));
  return key;
}

}  // namespace

bool reduces_rows(const ir::Kernel& k, int node) {
  const ir::Node& n = k.nodes[node];
  if (classify(n) != OpClass::Compute || n.spec->contract.empty() || is_matmul(n)) return false;
  const sem::AttrValue* axis = attr(n, "axis");
  auto rank = static_cast<std::int64_t>(k.nodes[n.inputs[0]].shape.size());
  return axis && rank >= 2 && std::get<std::int64_t>(*axis) == rank - 2;
}

Frame frame_of(const ir::Kernel& k, int node) {
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
  if (reduces_rows(k, node)) {
    // One row left: kept as a row of 1 (keepdims), or none, the free dim last.
    if (n.shape.size() < in.shape.size()) f.row = -1, f.col = f.rank - 1;
    return f;
  }
  if (a != static_cast<std::int64_t>(in.shape.size()) - 1)
    throw Unsupported(fmt::format("'{}' along axis {} of a rank-{} tensor: only the last (free) axis is tiled so far",
                                  n.op, a, in.shape.size()));
  if (n.shape.size() < in.shape.size()) {  // reduced without keepdims: the old row is now last
    f.row = f.rank - 1;
    f.col = -1;
  }
  return f;
}

Role operand_role(const ir::Kernel& k, int node, int operand) {
  const ir::Node& n = k.nodes[node];
  if (is_matmul(n)) return operand == 0 ? Role::RowAligned : Role::MatmulRhs;
  if (attr(n, "axis")) return Role::RowAligned;
  Frame out = frame_of(k, node);
  const auto& s = k.nodes[n.inputs[operand]].shape;
  if (out.row < 0) return s.empty() ? Role::Broadcast : Role::RowAligned;
  // Right-aligned broadcasting: the operand's dim under the output's row.
  int d = out.row - (out.rank - static_cast<int>(s.size()));
  if (d < 0 || is_one(s[d])) return is_one(n.shape[out.row]) && d >= 0 ? Role::RowAligned : Role::Broadcast;
  return Role::RowAligned;
}

std::vector<std::vector<int>> fusion_groups(const ir::Kernel& k, bool fuse) {
  std::vector<std::vector<int>> groups;
  std::vector<int> group_of(k.nodes.size(), -1);
  for (std::size_t c = 0; c < k.nodes.size(); ++c) {
    const ir::Node& n = k.nodes[c];
    if (classify(n) != OpClass::Compute || is_constant(k, static_cast<int>(c))) continue;
    int id = static_cast<int>(c);
    frame_of(k, id);  // throws for an op the tiler cannot place
    if (fuse && !groups.empty()) {
      int g = static_cast<int>(groups.size()) - 1;
      bool rows = row_key(k, id) == row_key(k, groups[g].front());
      bool ok = rows, linked = false;
      for (std::size_t i = 0; i < n.inputs.size() && ok; ++i) {
        int p = n.inputs[i];
        bool aligned = operand_role(k, id, static_cast<int>(i)) == Role::RowAligned;
        if (group_of[p] == g) {
          ok = aligned;
          linked = true;
        } else if (aligned && group_of[p] < 0) {
          // An independent branch over the same input: it joins when the group reads it too.
          for (int m : groups[g])
            for (std::size_t j = 0; j < k.nodes[m].inputs.size(); ++j)
              if (k.nodes[m].inputs[j] == p && operand_role(k, m, static_cast<int>(j)) == Role::RowAligned) linked = true;
        }
      }
      if (ok && linked) {
        groups[g].push_back(id);
        group_of[c] = g;
        continue;
      }
    }
    group_of[c] = static_cast<int>(groups.size());
    groups.push_back({id});
  }
  return groups;
}

}  // namespace ts::lower

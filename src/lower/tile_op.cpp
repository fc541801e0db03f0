#include "tilesweep/lower/tile_op.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "tilesweep/ir/graph_edit.h"
#include "tilesweep/lower/frame.h"
#include "tilesweep/lower/index_source.h"
#include "tilesweep/verify/cache.h"

namespace ts::lower {

OpClass classify(const ir::Node& n) {
  static const std::set<std::string> layout = {"reshape", "concat",       "slice",
                                               "repeat",  "broadcast_to", "transpose"};
  if (n.param >= 0) return OpClass::Input;
  if (n.inputs.empty()) return is_index_source(n) ? OpClass::Compute : OpClass::Constant;
  if (layout.count(n.op)) return OpClass::Layout;
  return OpClass::Compute;
}

bool is_constant(const ir::Kernel& k, int node) {
  const ir::Node& n = k.nodes[node];
  if (n.param >= 0 || is_index_source(n)) return false;
  for (int in : n.inputs)
    if (!is_constant(k, in)) return false;
  return true;
}

namespace {

// The last `n` dims of a shape.
std::vector<sem::Dim> tail(const std::vector<sem::Dim>& s, std::size_t n) {
  n = std::min(n, s.size());
  return {s.end() - static_cast<std::ptrdiff_t>(n), s.end()};
}

bool is_one(const sem::Dim& d) { return d.is_const() && d.value() == 1; }

// A reduction's tile keeps the reduced dim as 1 ([P, 1] along the free dim, [1, F] across
// partitions): instructions write 2-D tiles, and dropping a size-1 dim is only a view.
void keep_reduced_dim(const sem::OpSpec& spec, sem::AttrMap& attrs) {
  if (auto kd = attrs.find("keepdims"); kd != attrs.end() && !spec.contract.empty())
    kd->second = true;
}

}  // namespace

std::optional<TileOp> tile_op(const ir::Kernel& k, int id, std::string* why) {
  auto reject = [&](std::string reason) -> std::optional<TileOp> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  const ir::Node& n = k.nodes[id];
  if (classify(n) != OpClass::Compute) return reject("not a compute op");
  if (is_index_source(n)) return reject(index_source_reason(n));
  bool elementwise = n.spec->broadcast == std::vector<std::string>{"S"};
  sem::AttrMap attrs = n.attrs;
  std::vector<std::vector<sem::Dim>> shapes;
  std::vector<sem::Dim> out_tile = tail(n.shape, 2);
  for (int in : n.inputs) {
    const auto& s = k.nodes[in].shape;
    if (!elementwise) {
      shapes.push_back(tail(s, 2));
      continue;
    }
    // Element-wise: align with the output tile. Broadcasting across partitions is done by a
    // broadcasting DMA (the tile arrives whole); a [P, 1] per-partition scalar stays as it is.
    // A scalar (a literal, eps) becomes a per-partition [P, 1] immediate. Dims that are not 1
    // equal the output's (under the kernel's preconditions, e.g. N - N // 2 == N // 2).
    bool scalar = std::all_of(s.begin(), s.end(), is_one);
    std::vector<sem::Dim> t = tail(s, out_tile.size());
    while (t.size() < out_tile.size()) t.insert(t.begin(), sem::Dim(1));
    for (std::size_t d = 0; d < t.size(); ++d)
      if (!is_one(t[d])) t[d] = out_tile[d];
    if (t.size() == 2 && is_one(t[0]) && !is_one(out_tile[0])) t[0] = out_tile[0];
    if (scalar && out_tile.size() == 2) t = {out_tile[0], sem::Dim(1)};
    shapes.push_back(scalar && out_tile.size() < 2 ? std::vector<sem::Dim>{} : t);
  }
  // Axis attributes move with the dropped batch dims.
  for (const auto& a : n.spec->attrs) {
    if (a.type != sem::AttrType::Axis) continue;
    int rank = static_cast<int>(k.nodes[n.inputs[n.spec->operand_index(a.of)]].shape.size());
    auto axis = std::get<std::int64_t>(attrs.at(a.name));
    std::int64_t dropped = std::max(0, rank - 2);
    if (axis < dropped) return reject("reduces or scans along a batch dim");
    attrs[a.name] = axis - dropped;
  }
  keep_reduced_dim(*n.spec, attrs);
  // Tile sizes are free: every distinct size becomes a fresh dim (P, F, ...), so that the tile
  // op is independent of how the kernel's dims relate (N // 2, (M + 1) // 2) and equal tile ops
  // of different kernels meet in the synthesis cache.
  // An element-wise op's operands align with its output tile, so its dims are named by position
  // (P rows, F columns): a square tile (scores of N queries x N keys) has rows and columns of
  // different tile sizes, which one name would tie together.
  // So are a one-operand op's (a reduction of an N x N tile). A matmul's are named by role
  // (x [P, F], y [F, K]): attention's scores times values multiply an N x N tile whose rows and
  // contraction are different tiles.
  static const char* kNames[] = {"P", "F", "K", "Q", "R", "T", "U", "V"};
  const bool matmul =
      is_matmul(n) && shapes.size() == 2 && shapes[0].size() == 2 && shapes[1].size() == 2;
  const bool by_position = elementwise || shapes.size() == 1;
  std::map<std::string, sem::Dim> fresh;
  for (std::size_t i = 0; i < shapes.size(); ++i)
    for (std::size_t at = 0; at < shapes[i].size(); ++at) {
      sem::Dim& d = shapes[i][at];
      if (is_one(d)) continue;
      if (by_position || matmul) {
        d = sem::Dim::symbol(kNames[by_position ? at : i + at]);
        continue;
      }
      auto it = fresh.find(d.key());
      if (it == fresh.end()) {
        if (fresh.size() >= std::size(kNames)) return reject("too many distinct tile sizes");
        it = fresh.emplace(d.key(), sem::Dim::symbol(kNames[fresh.size()])).first;
      }
      d = it->second;
    }
  TileOp t;
  t.kernel.name = n.op;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    ir::Param p;
    p.name = i == 0 ? "x" : i == 1 ? "y" : "z" + std::to_string(i);
    p.scalar = shapes[i].empty();
    p.shape = shapes[i];
    p.dtype = k.nodes[n.inputs[i]].dtype;
    ir::Node in;
    in.op = "input";
    in.shape = shapes[i];
    in.dtype = p.dtype;
    in.param = static_cast<int>(i);
    in.label = p.name;
    in.origin = static_cast<int>(i);
    p.node = static_cast<int>(t.kernel.nodes.size());
    t.kernel.nodes.push_back(std::move(in));
    t.kernel.params.push_back(std::move(p));
    for (const auto& d : shapes[i])
      for (const auto& s : d.symbols())
        if (std::find(t.kernel.dims.begin(), t.kernel.dims.end(), s) == t.kernel.dims.end())
          t.kernel.dims.push_back(s);
  }
  std::vector<int> inputs;
  for (const auto& p : t.kernel.params) inputs.push_back(p.node);
  try {
    t.kernel.outputs = {ir::add_op(t.kernel, *n.spec, inputs, attrs, n.loc)};
  } catch (const UserError& e) {
    return reject(std::string("its tile form does not fit: ") + e.message());
  }
  t.key = verify::canonical_text(t.kernel);
  return t;
}

std::optional<TileOp> pair_tile_op(const ir::Kernel& k, int producer, int consumer) {
  const ir::Node& p = k.nodes[producer];
  const ir::Node& c = k.nodes[consumer];
  if (classify(p) != OpClass::Compute || classify(c) != OpClass::Compute) return std::nullopt;
  if (p.spec->broadcast != std::vector<std::string>{"S"} || c.spec->contract.empty() ||
      c.inputs != std::vector<int>{producer})
    return std::nullopt;
  for (int o : k.outputs)
    if (o == producer) return std::nullopt;
  for (const auto& n : k.nodes)
    for (std::size_t i = 0; i < n.inputs.size(); ++i)
      if (n.inputs[i] == producer && &n != &c) return std::nullopt;
  auto t = tile_op(k, producer);
  if (!t || !c.attrs.count("axis")) return std::nullopt;
  sem::AttrMap attrs = c.attrs;
  keep_reduced_dim(*c.spec, attrs);
  auto dropped = static_cast<std::int64_t>(p.shape.size()) -
                 static_cast<std::int64_t>(t->kernel.nodes[t->kernel.outputs[0]].shape.size());
  attrs["axis"] = std::get<std::int64_t>(attrs.at("axis")) - dropped;
  if (std::get<std::int64_t>(attrs["axis"]) < 0) return std::nullopt;
  try {
    t->kernel.outputs = {ir::add_op(t->kernel, *c.spec, {t->kernel.outputs[0]}, attrs, c.loc)};
  } catch (const UserError&) {
    return std::nullopt;
  }
  t->kernel.name = p.op + "+" + c.op;
  t->key = verify::canonical_text(t->kernel);
  return t;
}

}  // namespace ts::lower

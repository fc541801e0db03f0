#include "tilesweep/lower/tile_op.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "tilesweep/ir/graph_edit.h"
#include "tilesweep/lower/frame.h"
#include "tilesweep/lower/index_source.h"
#include "tilesweep/lower/split_reduction.h"
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

// A constant made of literals alone (no dim used as a value).
bool literal(const ir::Kernel& k, int node) {
  const ir::Node& n = k.nodes[node];
  if (n.param >= 0 || n.op == "dim") return false;
  return std::all_of(n.inputs.begin(), n.inputs.end(), [&](int in) { return literal(k, in); });
}

// Whether input `in` of `node` is computed inside the node's tile form (a position value, and
// the literal constants of an op reading one: a mask's fill becomes an instruction's immediate).
bool inlined(const ir::Kernel& k, int node, int in) {
  if (!reads_positions(k, node)) return false;
  return is_position(k, in) || (is_constant(k, in) && literal(k, in));
}

// A reduction's tile keeps the reduced dim as 1 ([P, 1] along the free dim, [1, F] across
// partitions): instructions write 2-D tiles, and dropping a size-1 dim is only a view.
void keep_reduced_dim(const sem::OpSpec& spec, sem::AttrMap& attrs) {
  if (auto kd = attrs.find("keepdims"); kd != attrs.end() && !spec.contract.empty())
    kd->second = true;
}

// The tile form of index source `m` read (through position values) by `node`: the tile's own
// row or column index plus the tile's origin (the dim kRowOrigin or kColOrigin, minus 1).
std::optional<int> inline_index(const ir::Kernel& k, int node, int m, ir::Kernel& t,
                                std::string& no) {
  const ir::Node& src = k.nodes[m];
  const sem::OpTable& ops = sem::OpTable::builtin();
  auto lead = src.attrs.find("lead");
  if (src.op != "iota" || lead == src.attrs.end()) {
    no = fmt::format("'{}' is an index tensor the tile forms do not know", src.op);
    return std::nullopt;
  }
  auto along = static_cast<int>(std::get<std::vector<sem::Dim>>(lead->second).size());
  int rank = static_cast<int>(k.nodes[node].shape.size());
  int at = rank - static_cast<int>(src.shape.size()) + along;
  if (at != rank - 2 && at != rank - 1) {
    no = "a mask along a batch dim is not lowered (only along a tile's rows or columns)";
    return std::nullopt;
  }
  bool row = at == rank - 2;
  sem::Dim extent = sem::Dim::symbol(row ? "P" : "F");
  std::vector<sem::Dim> before, after;
  (row ? after : before).push_back(sem::Dim(1));
  int index = ir::add_op(t, *ops.find("iota"), {},
                         {{"n", extent}, {"lead", before}, {"trail", after}}, src.loc);
  const char* origin = row ? kRowOrigin : kColOrigin;
  int start = ir::add_op(t, *ops.find("dim"), {},
                         {{"value", sem::Dim::symbol(origin) - sem::Dim(1)}}, src.loc);
  t.nodes[start].weak = true;
  for (const char* d : {row ? "P" : "F", origin})
    if (std::find(t.dims.begin(), t.dims.end(), d) == t.dims.end()) t.dims.push_back(d);
  return ir::add_op(t, *ops.find("add"), {index, start}, {}, src.loc);
}

// Copies the values `node` computes inside its tile form (inlined()) into `t`, setting their
// entries of `inputs`; the reason when one has no tile form ("" when all do). In node order,
// without recursion: inputs precede their readers.
std::string inline_positions(const ir::Kernel& k, int node, ir::Kernel& t,
                             std::vector<int>& inputs) {
  std::vector<int> todo;
  std::set<int> part;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] < 0) todo.push_back(k.nodes[node].inputs[i]);
  while (!todo.empty()) {
    int m = todo.back();
    todo.pop_back();
    if (!part.insert(m).second) continue;
    for (int in : k.nodes[m].inputs) todo.push_back(in);
  }
  std::map<int, int> at;
  for (int m : part) {
    const ir::Node& v = k.nodes[m];
    std::string no;
    if (is_index_source(v)) {
      auto id = inline_index(k, node, m, t, no);
      if (!id) return no;
      at[m] = *id;
      continue;
    }
    if (v.op == "dim")
      return "a mask that reads a dim's size as a value is not lowered (only literals)";
    bool ok = (v.inputs.empty() ||
               (v.spec->broadcast == std::vector<std::string>{"S"} && v.spec->contract.empty()));
    if (!ok)
      return fmt::format("'{}' in a mask is not element-wise (a mask is computed per tile)", v.op);
    std::vector<int> ins;
    for (int in : v.inputs) ins.push_back(at.at(in));
    try {
      at[m] = ir::add_op(t, *v.spec, ins, v.attrs, v.loc);
    } catch (const UserError& e) {
      return std::string("its mask's tile form does not fit: ") + e.message();
    }
  }
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] < 0) inputs[i] = at.at(k.nodes[node].inputs[i]);
  return "";
}

// A tile op's parameter `name` of `shape`; its node id.
int add_param(ir::Kernel& t, const std::string& name, std::vector<sem::Dim> shape, ir::DType dt) {
  ir::Param p;
  p.name = name;
  p.shape = shape;
  p.dtype = dt;
  ir::Node in;
  in.op = "input";
  in.shape = std::move(shape);
  in.dtype = dt;
  in.param = static_cast<int>(t.params.size());
  in.label = name;
  in.origin = in.param;
  p.node = static_cast<int>(t.nodes.size());
  t.nodes.push_back(std::move(in));
  t.params.push_back(std::move(p));
  for (const auto& d : t.params.back().shape)
    for (const auto& s : d.symbols())
      if (std::find(t.dims.begin(), t.dims.end(), s) == t.dims.end()) t.dims.push_back(s);
  return t.params.back().node;
}

// The step of reduction `id` along a batch dim (frame.h, reduces_batch): its reducer's
// element-wise combine of the running value x and the next slice y, both [P, F].
std::optional<TileOp> batch_step_op(const ir::Kernel& k, int id, std::string* why) {
  const ir::Node& n = k.nodes[id];
  std::optional<std::string> op = combine_op(n);
  const sem::OpSpec* spec = op ? sem::OpTable::builtin().find(*op) : nullptr;
  if (!spec) {
    if (why) *why = "reduces along a batch dim with no element-wise combine (e.g. a mean)";
    return std::nullopt;
  }
  TileOp t;
  t.kernel.name = *op;
  std::vector<sem::Dim> tile = {sem::Dim::symbol("P"), sem::Dim::symbol("F")};
  int x = add_param(t.kernel, "x", tile, n.dtype);
  int y = add_param(t.kernel, "y", tile, k.nodes[n.inputs[0]].dtype);
  t.kernel.outputs = {ir::add_op(t.kernel, *spec, {x, y}, {}, n.loc)};
  t.key = verify::canonical_text(t.kernel);
  return t;
}

}  // namespace

std::optional<TileOp> tile_op(const ir::Kernel& k, int id, std::string* why) {
  auto reject = [&](std::string reason) -> std::optional<TileOp> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  const ir::Node& n = k.nodes[id];
  if (classify(n) != OpClass::Compute) return reject("not a compute op");
  if (is_position(k, id)) return reject(index_source_reason(n));
  if (reduces_batch(k, id)) return batch_step_op(k, id, why);
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
  std::vector<int> inputs(n.inputs.size(), -1);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (inlined(k, id, n.inputs[i])) continue;
    const std::size_t at = t.kernel.params.size();
    ir::Param p;
    p.name = at == 0 ? "x" : at == 1 ? "y" : "z" + std::to_string(at);
    p.scalar = shapes[i].empty();
    p.shape = shapes[i];
    p.dtype = k.nodes[n.inputs[i]].dtype;
    ir::Node in;
    in.op = "input";
    in.shape = shapes[i];
    in.dtype = p.dtype;
    in.param = static_cast<int>(at);
    in.label = p.name;
    in.origin = static_cast<int>(at);
    p.node = static_cast<int>(t.kernel.nodes.size());
    inputs[i] = p.node;
    t.kernel.nodes.push_back(std::move(in));
    t.kernel.params.push_back(std::move(p));
    for (const auto& d : shapes[i])
      for (const auto& s : d.symbols())
        if (std::find(t.kernel.dims.begin(), t.kernel.dims.end(), s) == t.kernel.dims.end())
          t.kernel.dims.push_back(s);
  }
  if (reads_positions(k, id)) {
    if (!elementwise) return reject("reads a mask, which only element-wise ops do so far");
    if (out_tile.size() != 2) return reject("reads a mask but its tile has no rows and columns");
    std::string no = inline_positions(k, id, t.kernel, inputs);
    if (!no.empty()) return reject(no);
  }
  try {
    t.kernel.outputs = {ir::add_op(t.kernel, *n.spec, inputs, attrs, n.loc)};
  } catch (const UserError& e) {
    return reject(std::string("its tile form does not fit: ") + e.message());
  }
  t.key = verify::canonical_text(t.kernel);
  return t;
}

std::vector<int> tile_operands(const ir::Kernel& k, int node) {
  std::vector<int> out;
  const auto& ins = k.nodes[node].inputs;
  for (std::size_t i = 0; i < ins.size(); ++i)
    if (!inlined(k, node, ins[i])) out.push_back(static_cast<int>(i));
  return out;
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

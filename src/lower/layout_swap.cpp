#include "tilesweep/lower/layout_swap.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "tilesweep/ir/graph_edit.h"
#include "tilesweep/lower/fusion.h"
#include "tilesweep/verify/cache.h"

namespace ts::lower {

std::vector<int> SwapSite::transposed() const {
  std::vector<int> out = producers;
  out.insert(out.end(), chain.begin(), chain.end());
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

bool is_one(const sem::Dim& d) { return d.is_const() && d.value() == 1; }
bool all_ones(const std::vector<sem::Dim>& s) { return std::all_of(s.begin(), s.end(), is_one); }
bool is_output(const ir::Kernel& k, int node) {
  return std::count(k.outputs.begin(), k.outputs.end(), node) > 0;
}

bool elementwise(const ir::Node& n) {
  return classify(n) == OpClass::Compute && n.spec->broadcast == std::vector<std::string>{"S"} &&
         n.spec->contract.empty() && !n.attrs.count("axis");
}

// The values of the site that ends at `consumer`, or nullopt when one of them does not qualify.
std::optional<SwapSite> site_of(const ir::Kernel& k, int consumer,
                                const std::vector<std::vector<int>>& users) {
  int h = k.nodes[consumer].inputs[0];
  if (classify(k.nodes[h]) != OpClass::Compute || is_constant(k, h)) return std::nullopt;
  SwapSite s;
  s.consumer = consumer;
  std::set<int> inside;
  std::vector<int> todo = {h};
  while (!todo.empty()) {
    int n = todo.back();
    todo.pop_back();
    if (!inside.insert(n).second) continue;
    const ir::Node& node = k.nodes[n];
    if (is_output(k, n) || node.shape.size() != 2) return std::nullopt;
    if (is_matmul(node)) {
      s.producers.push_back(n);
      continue;
    }
    if (!elementwise(node)) return std::nullopt;
    s.chain.push_back(n);
    for (int in : node.inputs) {
      if (is_constant(k, in) || all_ones(k.nodes[in].shape)) continue;  // a scalar stays a scalar
      if (classify(k.nodes[in]) != OpClass::Compute || k.nodes[in].shape != node.shape)
        return std::nullopt;
      todo.push_back(in);
    }
  }
  // Nothing outside reads a value computed transposed; the consumer reads one as its left operand
  // only.
  for (int n : inside)
    for (int u : users[n])
      if (!inside.count(u) && (u != consumer || k.nodes[consumer].inputs[1] == n))
        return std::nullopt;
  if (s.producers.empty()) return std::nullopt;
  std::sort(s.producers.begin(), s.producers.end());
  std::sort(s.chain.begin(), s.chain.end());
  return s;
}

int add_param(ir::Kernel& k, const std::string& name, std::vector<sem::Dim> shape) {
  ir::Param p;
  p.name = name;
  p.shape = shape;
  p.scalar = shape.empty();
  ir::Node in;
  in.op = "input";
  in.shape = std::move(shape);
  in.param = static_cast<int>(k.params.size());
  in.label = name;
  in.origin = in.param;
  p.node = static_cast<int>(k.nodes.size());
  k.nodes.push_back(std::move(in));
  k.params.push_back(std::move(p));
  for (const auto& d : k.params.back().shape)
    for (const auto& s : d.symbols())
      if (std::find(k.dims.begin(), k.dims.end(), s) == k.dims.end()) k.dims.push_back(s);
  return k.params.back().node;
}

int transpose(ir::Kernel& k, int node) {
  return ir::add_op(k, *sem::OpTable::builtin().find("transpose"), {node},
                    {{"axes", std::vector<sem::Dim>{sem::Dim(1), sem::Dim(0)}}}, {});
}

// Copies the nodes of `from` that `root` depends on into `into`, its parameters mapped to
// `params` (node ids of `into`; -1: the parameter must not be reached). Returns the copy of
// `root`, or -1 when an unmapped parameter is reached.
int copy_nodes(ir::Kernel& into, const ir::Kernel& from, int root, const std::vector<int>& params) {
  std::vector<int> at(from.nodes.size(), -1);
  std::vector<bool> need(from.nodes.size(), false);
  need[root] = true;
  for (int i = root; i >= 0; --i)
    if (need[i])
      for (int in : from.nodes[i].inputs) need[in] = true;
  for (std::size_t i = 0; i < from.nodes.size(); ++i) {
    if (!need[i]) continue;
    const ir::Node& n = from.nodes[i];
    if (n.param >= 0) {
      at[i] = params[n.param];
      if (at[i] < 0) return -1;
      continue;
    }
    std::vector<int> ins;
    for (int in : n.inputs) ins.push_back(at[in]);
    at[i] = ir::add_op(into, *n.spec, ins, n.attrs, n.loc);
    into.nodes[at[i]].weak = n.weak;
  }
  return at[root];
}

// The parameters of a matmul tile op, x [P, F] and y [F, K]: their node ids.
std::pair<int, int> matmul_params(ir::Kernel& k) {
  int x = add_param(k, "x", {sem::Dim::symbol("P"), sem::Dim::symbol("F")});
  return {x, add_param(k, "y", {sem::Dim::symbol("F"), sem::Dim::symbol("K")})};
}

TileOp finish(ir::Kernel k, std::string name, int out) {
  k.name = std::move(name);
  k.outputs = {out};
  TileOp t;
  t.key = verify::canonical_text(k);
  t.kernel = std::move(k);
  return t;
}

}  // namespace

std::vector<SwapSite> swap_sites(const ir::Kernel& k) {
  std::vector<std::vector<int>> users(k.nodes.size());
  for (std::size_t i = 0; i < k.nodes.size(); ++i)
    for (int in : k.nodes[i].inputs) users[in].push_back(static_cast<int>(i));
  std::vector<SwapSite> out;
  for (std::size_t q = 0; q < k.nodes.size(); ++q) {
    const ir::Node& n = k.nodes[q];
    if (!is_matmul(n) || n.shape.size() != 2 || k.nodes[n.inputs[1]].shape.size() != 2) continue;
    if (auto s = site_of(k, static_cast<int>(q), users)) out.push_back(std::move(*s));
  }
  return out;
}

TileOp transposed_use_op() {
  ir::Kernel k;
  int x = add_param(k, "x", {sem::Dim::symbol("F"), sem::Dim::symbol("P")});
  int y = add_param(k, "y", {sem::Dim::symbol("F"), sem::Dim::symbol("K")});
  return finish(
      k, "matmul_of_transpose",
      ir::add_op(k, *sem::OpTable::builtin().find("matmul"), {transpose(k, x), y}, {}, {}));
}

TileOp transposed_matmul_op() {
  ir::Kernel k;
  auto [x, y] = matmul_params(k);
  return finish(
      k, "transposed_matmul",
      transpose(k, ir::add_op(k, *sem::OpTable::builtin().find("matmul"), {x, y}, {}, {})));
}

std::optional<TileOp> transposed_root_op(const sem::InstrSpec& root) {
  const sem::OpSpec& op = root.op;
  if (op.operands.size() != 2 || !op.attrs.empty() || op.out.items.size() != 2) return std::nullopt;
  ir::Kernel k;
  std::vector<int> params;
  for (std::size_t i = 0; i < 2; ++i) {
    if (op.shapes[i].items.size() != 2) return std::nullopt;
    std::vector<sem::Dim> shape;
    for (const auto& item : op.shapes[i].items) {
      if (item.name.empty()) return std::nullopt;
      std::string s = item.name;
      for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      shape.push_back(sem::Dim::symbol(s));
    }
    params.push_back(add_param(k, i == 0 ? "a" : "b", shape));
  }
  try {
    return finish(k, "transposed_" + op.name, transpose(k, ir::add_op(k, op, params, {}, {})));
  } catch (const UserError&) {
    return std::nullopt;
  }
}

std::pair<ir::Kernel, ir::Kernel> commute_kernels(const ir::Kernel& k, int node) {
  const ir::Node& n = k.nodes[node];
  ir::Kernel a, b;
  std::vector<int> pa, pb;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const ir::Node& in = k.nodes[n.inputs[i]];
    bool scalar = is_constant(k, n.inputs[i]) || all_ones(in.shape);
    std::vector<sem::Dim> shape;
    if (!scalar) shape = {sem::Dim::symbol("P"), sem::Dim::symbol("F")};
    std::string name = "x" + std::to_string(i);
    pa.push_back(add_param(a, name, shape));
    int q = add_param(b, name, shape);
    pb.push_back(scalar ? q : transpose(b, q));
  }
  a.name = b.name = n.op;
  a.outputs = {transpose(a, ir::add_op(a, *n.spec, pa, n.attrs, n.loc))};
  b.outputs = {ir::add_op(b, *n.spec, pb, n.attrs, n.loc)};
  return {std::move(a), std::move(b)};
}

std::optional<SplitLowering> split_at_root(const ir::Kernel& lowering, const sem::InstrTable& isa) {
  const ir::Kernel& l = lowering;
  if (l.params.size() != 2 || l.outputs.size() != 1) return std::nullopt;
  const ir::Node& r = l.nodes[l.outputs[0]];
  const sem::InstrSpec* root = isa.find(r.op);
  if (!root || r.inputs.size() != 2 || r.inputs[1] != l.params[1].node ||
      r.inputs[0] == l.params[0].node)
    return std::nullopt;
  SplitLowering s;
  s.root = root;
  s.pre.name = "pre_" + r.op;
  int x = add_param(s.pre, l.params[0].name, l.params[0].shape);
  int a = copy_nodes(s.pre, l, r.inputs[0], {x, -1});
  if (a < 0) return std::nullopt;
  s.pre.outputs = {a};
  ir::Kernel& rp = s.root_program;
  rp.name = r.op;
  int pa = add_param(rp, "a", s.pre.nodes[a].shape);
  int y = add_param(rp, l.params[1].name, l.params[1].shape);
  rp.outputs = {ir::add_op(rp, *r.spec, {pa, y}, r.attrs, r.loc)};
  rp.nodes[rp.outputs[0]].weak = r.weak;
  return s;
}

ir::Kernel compose(const ir::Kernel& pre, const ir::Kernel& root) {
  ir::Kernel k;
  k.name = root.name;
  auto [x, y] = matmul_params(k);
  int a = copy_nodes(k, pre, pre.outputs[0], {x});
  k.outputs = {copy_nodes(k, root, root.outputs[0], {a, y})};
  return k;
}

}  // namespace ts::lower

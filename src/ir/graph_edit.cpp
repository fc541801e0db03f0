#include "tilesweep/ir/graph_edit.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "tilesweep/base/hash.h"

namespace ts::ir {

namespace {

DType dtype_named(const std::string& name, const sem::OpSpec& spec, const SourceLoc& loc) {
  auto t = parse_dtype(name);
  if (!t)
    fail(loc, "op '{}' gives the dtype '{}', which is not f32, bf16, f16 or f8", spec.name, name);
  return *t;
}

// The node's dtype by its op's rule (OpSpec::dtype_*): a fixed or cast dtype, else the NumPy
// promotion of the operands that decide it. A weak operand (a literal, a scalar parameter, or a
// value of those only) takes the dtype of what it meets, as Python numbers do in NumPy and NKI;
// with weak operands only, the result is weak, of their declared dtypes (a literal's: f32).
void result_dtype(const Kernel& k, const sem::OpSpec& spec, Node& n, const SourceLoc& loc) {
  if (!spec.dtype_fixed.empty()) {
    n.dtype = dtype_named(spec.dtype_fixed, spec, loc);
    return;
  }
  if (!spec.dtype_cast.empty()) {
    n.dtype = dtype_named(std::get<std::string>(n.attrs.at(spec.dtype_cast)), spec, loc);
    return;
  }
  bool any = false;
  for (std::size_t j = 0; j < n.inputs.size(); ++j) {
    const Node& in = k.nodes[n.inputs[j]];
    bool decides = spec.dtype_from.empty() ||
                   std::find(spec.dtype_from.begin(), spec.dtype_from.end(), spec.operands[j]) !=
                       spec.dtype_from.end();
    if (in.weak || !decides) continue;
    n.dtype = any ? promote(n.dtype, in.dtype) : in.dtype;
    any = true;
  }
  n.weak = !n.inputs.empty() && !any;
  if (!n.weak) return;
  bool typed = false;
  for (int in : n.inputs) {
    const Node& x = k.nodes[in];
    if (x.op == "const" || x.op == "dim") continue;
    n.dtype = typed ? promote(n.dtype, x.dtype) : x.dtype;
    typed = true;
  }
}

}  // namespace

int add_op(Kernel& k, const sem::OpSpec& spec, std::vector<int> inputs, const sem::AttrMap& attrs,
           const SourceLoc& loc) {
  std::vector<std::vector<Dim>> shapes;
  for (int i : inputs) shapes.push_back(k.nodes[i].shape);
  sem::OpInstance inst = sem::instantiate(spec, shapes, attrs, loc);
  Node n;
  n.op = spec.name;
  n.spec = &spec;
  n.inputs = std::move(inputs);
  n.attrs = std::move(inst.attrs);
  n.shape = std::move(inst.shape);
  n.body = std::move(inst.body);
  n.loc = loc;
  n.origin = static_cast<int>(k.nodes.size());
  result_dtype(k, spec, n, loc);
  for (auto& p : inst.preconditions) {
    if (loc.line > 0) p.what += fmt::format(" at line {}", loc.line);
    add_precondition(k, std::move(p));
  }
  k.nodes.push_back(std::move(n));
  return static_cast<int>(k.nodes.size()) - 1;
}

void add_precondition(Kernel& k, sem::Precondition p) {
  for (const auto& q : k.preconditions)
    if (q.str() == p.str()) return;
  k.preconditions.push_back(std::move(p));
}

std::uint64_t node_hash(const Kernel& k, int id, std::vector<std::uint64_t>& memo) {
  if (memo.size() != k.nodes.size()) memo.assign(k.nodes.size(), 0);
  if (memo[id]) return memo[id];
  const Node& n = k.nodes[id];
  std::uint64_t h;
  if (n.param >= 0) {
    h = hash_bytes(fmt::format("param{}", n.param));
  } else {
    std::string text = n.op;
    for (const auto& [name, v] : n.attrs) text += "," + name + "=" + sem::to_string(v);
    h = hash_bytes(text);
    for (int in : n.inputs) h = hash_combine(h, node_hash(k, in, memo));
  }
  if (h == 0) h = 1;
  return memo[id] = h;
}

std::uint64_t structural_hash(const Kernel& k) {
  std::vector<std::uint64_t> memo;
  std::uint64_t h = hash_bytes("kernel");
  for (int o : k.outputs) h = hash_combine(h, node_hash(k, o, memo));
  return h;
}

Kernel compact(const Kernel& k) {
  std::vector<std::uint64_t> memo;
  std::vector<bool> live(k.nodes.size(), false);
  std::vector<int> stack(k.outputs.begin(), k.outputs.end());
  for (const auto& p : k.params) live[p.node] = true;
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    if (live[id] && k.nodes[id].param < 0) continue;
    live[id] = true;
    for (int in : k.nodes[id].inputs) stack.push_back(in);
  }
  // Topological order: a node after all its inputs (DFS post-order from the parameters and
  // outputs), merging nodes with equal structural hashes.
  Kernel out = k;
  out.nodes.clear();
  std::vector<int> remap(k.nodes.size(), -1);
  std::map<std::uint64_t, int> by_hash;
  std::function<int(int)> visit = [&](int id) -> int {
    if (remap[id] >= 0) return remap[id];
    std::uint64_t h = node_hash(k, id, memo);
    if (auto it = by_hash.find(h); it != by_hash.end()) return remap[id] = it->second;
    Node n = k.nodes[id];
    for (int& in : n.inputs) in = visit(in);
    out.nodes.push_back(std::move(n));
    int nid = static_cast<int>(out.nodes.size()) - 1;
    by_hash[h] = nid;
    return remap[id] = nid;
  };
  for (auto& p : out.params) p.node = visit(p.node);
  for (std::size_t i = 0; i < k.nodes.size(); ++i)
    if (live[i]) visit(static_cast<int>(i));
  for (int& o : out.outputs) o = remap[o];
  return out;
}

}  // namespace ts::ir

#include "swap.h"

#include <algorithm>
#include <map>

#include "tilesweep/ir/graph_edit.h"

namespace ts::mutate {

namespace {

// Dims mentioned by the parameters, in order of first appearance.
std::vector<std::string> used_dims(const ir::Kernel& k) {
  std::vector<std::string> out;
  for (const auto& p : k.params)
    for (const auto& d : p.shape)
      for (const auto& s : d.symbols())
        if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  return out;
}

// A kernel whose parameters are `externals` of g (in order), for a local equivalence query.
ir::Kernel local_kernel(const ir::Kernel& g, const std::vector<int>& externals,
                        std::map<int, int>& map) {
  ir::Kernel k;
  k.name = g.name;
  for (std::size_t i = 0; i < externals.size(); ++i) {
    const ir::Node& src = g.nodes[externals[i]];
    ir::Param p;
    p.name = "t" + std::to_string(i);
    p.scalar = src.shape.empty();
    p.dtype = src.dtype;
    p.shape = src.shape;
    ir::Node n;
    n.op = "input";
    n.shape = src.shape;
    n.dtype = src.dtype;
    n.param = static_cast<int>(i);
    n.label = p.name;
    p.node = static_cast<int>(k.nodes.size());
    k.nodes.push_back(std::move(n));
    k.params.push_back(std::move(p));
    map[externals[i]] = k.params.back().node;
  }
  k.dims = used_dims(k);
  for (const auto& pre : g.preconditions) ir::add_precondition(k, pre);
  for (const auto& pre : k.preconditions)
    for (const auto& s : pre.lhs.symbols())
      if (std::find(k.dims.begin(), k.dims.end(), s) == k.dims.end()) k.dims.push_back(s);
  for (const auto& pre : k.preconditions)
    for (const auto& s : pre.rhs.symbols())
      if (std::find(k.dims.begin(), k.dims.end(), s) == k.dims.end()) k.dims.push_back(s);
  return k;
}

std::vector<int> mapped(const std::vector<int>& ids, const std::map<int, int>& map) {
  std::vector<int> out;
  for (int i : ids) out.push_back(map.at(i));
  return out;
}

}  // namespace

std::optional<Swap> swap_with_successor(const ir::Kernel& g, int p, int q,
                                        const std::vector<int>& through) {
  const ir::Node& n1 = g.nodes[p];
  const ir::Node& n2 = g.nodes[q];
  try {
    // The rewritten kernel.
    ir::Kernel k = g;
    std::vector<int> inputs1 = n1.inputs;
    for (int s : through) {
      std::vector<int> ins = n2.inputs;
      for (int& x : ins)
        if (x == p) x = n1.inputs[s];
      int c = ir::add_op(k, *n2.spec, ins, n2.attrs, n2.loc);
      k.nodes[c].origin = n2.origin;
      inputs1[s] = c;
    }
    int r = ir::add_op(k, *n1.spec, inputs1, n1.attrs, n1.loc);
    k.nodes[r].origin = n1.origin;
    if (k.nodes[r].shape != n2.shape) return std::nullopt;
    for (std::size_t i = 0; i < k.nodes.size(); ++i) {
      if (static_cast<int>(i) == r) continue;
      for (int& in : k.nodes[i].inputs)
        if (in == q && i < g.nodes.size()) in = r;
    }
    for (int& o : k.outputs)
      if (o == q) o = r;
    Swap sw;
    sw.op1_origin = n1.origin;
    sw.graph = ir::compact(k);

    // The local query over the pair's external inputs.
    std::vector<int> externals = n1.inputs;
    for (int x : n2.inputs)
      if (x != p && std::find(externals.begin(), externals.end(), x) == externals.end())
        externals.push_back(x);
    std::map<int, int> mb;
    sw.before = local_kernel(g, externals, mb);
    int b1 = ir::add_op(sw.before, *n1.spec, mapped(n1.inputs, mb), n1.attrs, {});
    mb[p] = b1;
    sw.before.outputs = {ir::add_op(sw.before, *n2.spec, mapped(n2.inputs, mb), n2.attrs, {})};
    std::map<int, int> ma;
    sw.after = local_kernel(g, externals, ma);
    std::vector<int> in1 = mapped(n1.inputs, ma);
    for (int s : through) {
      std::vector<int> ins = n2.inputs;
      for (int& x : ins) x = x == p ? n1.inputs[s] : x;
      in1[s] = ir::add_op(sw.after, *n2.spec, mapped(ins, ma), n2.attrs, {});
    }
    sw.after.outputs = {ir::add_op(sw.after, *n1.spec, in1, n1.attrs, {})};
    return sw;
  } catch (const UserError&) {
    return std::nullopt;  // the op semantics reject the swapped operands' shapes
  }
}

}  // namespace ts::mutate

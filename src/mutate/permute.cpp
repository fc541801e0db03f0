#include "permute.h"

#include <algorithm>

#include "tilesweep/base/error.h"
#include "tilesweep/ir/graph_edit.h"

namespace ts::mutate {

namespace {

bool is_one(const sem::Dim& d) { return d.is_const() && d.value() == 1; }
bool scalar(const std::vector<sem::Dim>& s) { return std::all_of(s.begin(), s.end(), is_one); }

// The op's one attribute of type Axis ("" when it has none); false when it has others of an
// axis kind (an Axes list, a second Axis).
bool single_axis(const sem::OpSpec& spec, std::string& name) {
  name.clear();
  for (const auto& a : spec.attrs) {
    if (a.type == sem::AttrType::Axes || (a.type == sem::AttrType::Axis && !name.empty()))
      return false;
    if (a.type == sem::AttrType::Axis) name = a.name;
  }
  return true;
}

// Whether node `n` can run on swapped operands: its operands rank 3 (or scalars), and it is
// element-wise or has one axis attribute; its result rank 3, or rank 2 when it drops axis 0 or 1
// (which the swap leaves the same value).
bool swappable(const ir::Kernel& k, const ir::Node& n) {
  if (n.param >= 0 || !n.spec || n.inputs.empty()) return false;
  std::string axis;
  if (!single_axis(*n.spec, axis)) return false;
  bool elementwise = axis.empty() && n.spec->broadcast == std::vector<std::string>{"S"};
  if (!elementwise && axis.empty()) return false;
  for (int in : n.inputs) {
    const auto& s = k.nodes[in].shape;
    if (s.size() != 3 && !(elementwise && s.size() < 3 && scalar(s))) return false;
  }
  if (n.shape.size() == 3) return true;
  return !axis.empty() && n.shape.size() == 2 && std::get<std::int64_t>(n.attrs.at(axis)) < 2;
}

struct Swapper {
  const ir::Kernel& k;
  ir::Kernel out;
  std::vector<int> at;        // node of k -> its node in `out`
  std::vector<char> swapped;  // whether at[i] holds node i with dims 0 and 1 swapped
  std::vector<char> view;     // node i is a parameter seen through one-operand ops
  bool leaks = false;  // an op that cannot swap reads a swapped value, or a swapped op a computed
                       // rank-3 value
  const sem::OpSpec& transpose = *sem::OpTable::builtin().find("transpose");

  int swap_dims(int node) {
    const ir::Node& n = out.nodes[node];
    std::vector<sem::Dim> axes = {sem::Dim(1), sem::Dim(0), sem::Dim(2)};
    // transpose(transpose(x)) is x
    if (n.op == "transpose" && std::get<std::vector<sem::Dim>>(n.attrs.at("axes")) == axes)
      return n.inputs[0];
    return ir::add_op(out, transpose, {node}, {{"axes", axes}}, {});
  }
  // Input `in` of a node: swapped (`want`) or as in k.
  int operand(int in, bool want) {
    bool rank3 = k.nodes[in].shape.size() == 3;
    if (!rank3 || swapped[in] == want) return at[in];
    leaks = leaks || (want && !view[in]);
    return swap_dims(at[in]);
  }
  int copy(int i, std::vector<int> inputs, sem::AttrMap attrs) {
    const ir::Node& n = k.nodes[i];
    int id = ir::add_op(out, *n.spec, std::move(inputs), attrs, n.loc);
    out.nodes[id].label = n.label;
    out.nodes[id].origin = n.origin;
    out.nodes[id].weak = n.weak;
    return id;
  }
  bool run();
};

bool Swapper::run() {
  out.name = k.name;
  out.loc = k.loc;
  out.params = k.params;
  out.dims = k.dims;
  out.preconditions = k.preconditions;
  at.assign(k.nodes.size(), -1);
  swapped.assign(k.nodes.size(), 0);
  view.assign(k.nodes.size(), 0);
  bool any = false;
  for (std::size_t i = 0; i < k.nodes.size(); ++i) {
    const ir::Node& n = k.nodes[i];
    if (n.param >= 0) {
      out.nodes.push_back(n);
      at[i] = static_cast<int>(out.nodes.size()) - 1;
      out.params[static_cast<std::size_t>(n.param)].node = at[i];
      view[i] = 1;
      continue;
    }
    view[i] = n.inputs.size() == 1 && view[static_cast<std::size_t>(n.inputs[0])];
    bool swap = swappable(k, n);
    std::vector<int> inputs;
    for (int in : n.inputs) {
      leaks = leaks || (!swap && swapped[in]);
      inputs.push_back(operand(in, swap));
    }
    sem::AttrMap attrs = n.attrs;
    std::string axis;
    if (swap && single_axis(*n.spec, axis) && !axis.empty()) {
      auto& a = std::get<std::int64_t>(attrs.at(axis));
      if (a < 2) a = 1 - a;
    }
    at[i] = copy(static_cast<int>(i), std::move(inputs), attrs);
    swapped[i] = swap && n.shape.size() == 3;
    any = any || swapped[i];
  }
  for (int o : k.outputs) out.outputs.push_back(operand(o, false));
  out = ir::compact(out);
  return any && !leaks;
}

}  // namespace

std::optional<ir::Kernel> swap_leading_dims(const ir::Kernel& k) {
  Swapper s{k, {}, {}, {}};
  try {
    if (!s.run()) return std::nullopt;
  } catch (const UserError&) {
    return std::nullopt;  // an op that does not accept the swapped operands
  }
  return std::move(s.out);
}

}  // namespace ts::mutate

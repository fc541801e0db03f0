#include "tilesweep/ir/graph_printer.h"

#include <fmt/format.h>

namespace ts::ir {

namespace {

std::string type_str(DType t, const std::vector<Dim>& shape, bool scalar) {
  return scalar ? dtype_name(t) : std::string(dtype_name(t)) + format_shape(shape);
}

std::string node_ref(const Kernel& k, int id) {
  const Node& n = k.nodes[id];
  return n.param >= 0 ? n.label : fmt::format("%{}", id);
}

}  // namespace

namespace {
std::string expr_of(const Kernel& k, int id) {
  const Node& n = k.nodes[id];
  if (n.param >= 0) return n.label;
  if (n.op == "const") return sem::to_string(n.attrs.at("value"));
  if (n.op == "dim") return sem::to_string(n.attrs.at("value"));
  std::string s = n.op + "(";
  bool first = true;
  for (int in : n.inputs) {
    s += (first ? "" : ", ") + expr_of(k, in);
    first = false;
  }
  for (const auto& [name, v] : n.attrs) {
    if (name == "keepdims" && std::get_if<bool>(&v) && !std::get<bool>(v)) continue;
    s += (first ? "" : ", ") + name + "=" + sem::to_string(v);
    first = false;
  }
  return s + ")";
}
}  // namespace

std::string expression_text(const Kernel& k) {
  std::string s;
  for (std::size_t i = 0; i < k.outputs.size(); ++i)
    s += (i ? ", " : "") + expr_of(k, k.outputs[i]);
  return s;
}

std::string kernel_signature(const Kernel& k) {
  std::string s = k.name + "(";
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const Param& p = k.params[i];
    s += (i ? ", " : "") + p.name + ": " + type_str(p.dtype, p.shape, p.scalar);
    if (p.default_value) s += fmt::format(" = {}", *p.default_value);
  }
  s += ") -> ";
  if (k.outputs.size() > 1) s += "(";
  for (std::size_t i = 0; i < k.outputs.size(); ++i) {
    const Node& n = k.nodes[k.outputs[i]];
    s += (i ? ", " : "") + type_str(n.dtype, n.shape, false);
  }
  if (k.outputs.size() > 1) s += ")";
  return s;
}

std::string print_kernel(const Kernel& k) {
  std::string s = "kernel " + kernel_signature(k) + "\n";
  s += "  dims: ";
  for (std::size_t i = 0; i < k.dims.size(); ++i) s += (i ? ", " : "") + k.dims[i];
  s += k.dims.empty() ? "none\n" : "\n";
  for (std::size_t i = 0; i < k.nodes.size(); ++i) {
    const Node& n = k.nodes[i];
    if (n.param >= 0) continue;
    std::string call = n.op + "(";
    bool first = true;
    for (int in : n.inputs) {
      call += (first ? "" : ", ") + node_ref(k, in);
      first = false;
    }
    for (const auto& [name, v] : n.attrs) {
      call += (first ? "" : ", ") + name + "=" + sem::to_string(v);
      first = false;
    }
    call += ")";
    std::string lhs = fmt::format("%{}", i);
    if (!n.label.empty()) lhs += " " + n.label;
    s += fmt::format("  {:<12} = {:<40} : {:<16} # line {}\n", lhs, call,
                     type_str(n.dtype, n.shape, false), n.loc.line);
  }
  s += "  return ";
  for (std::size_t i = 0; i < k.outputs.size(); ++i)
    s += (i ? ", " : "") + node_ref(k, k.outputs[i]);
  s += "\n";
  for (const auto& p : k.preconditions) s += "  requires " + p.str() + "  (" + p.what + ")\n";
  return s;
}

}  // namespace ts::ir

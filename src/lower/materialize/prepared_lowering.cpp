// A lowering program (an op's proved instruction program over its tile form) prepared for
// emission (contract): for each of its nodes what it is (operand, constant, a layout of a
// constant, an instruction), the instruction's spec on the target, and its shape as dims of the
// operands' tiles where a bare symbol decides it, so that emitting it per candidate reads
// positions instead of evaluating dims. Values in, value out; done once per program and section.
#include <algorithm>
#include <cctype>
#include <map>

#include "prefix.h"
#include "tilesweep/lower/tile_op.h"

namespace ts::lower {

bool bare_symbol(const sem::Dim& d) {
  const std::string& k = d.key();
  if (k.empty() || std::isdigit(static_cast<unsigned char>(k[0]))) return false;
  return std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

namespace {

using BoundDims = std::map<std::string, Extent, std::less<>>;

// The operand dims as emission binds them (a later operand's binding wins).
BoundDims operand_dims(const ir::Kernel& lowering) {
  BoundDims bound;
  for (std::size_t i = 0; i < lowering.params.size(); ++i)
    for (std::size_t d = 0; d < lowering.params[i].shape.size(); ++d)
      if (bare_symbol(lowering.params[i].shape[d]))
        bound[lowering.params[i].shape[d].key()] = {static_cast<int>(i), static_cast<int>(d), 0};
  return bound;
}

void resolve_shape(const ir::Node& node, const BoundDims& bound, LoweringNode& prepared) {
  prepared.resolved = true;
  for (const auto& d : node.shape) {
    if (d.is_const()) {
      prepared.shape.push_back({-1, 0, d.value()});
    } else if (auto b = bound.find(d.key()); b != bound.end()) {
      prepared.shape.push_back(b->second);
    } else {
      prepared.resolved = false;
      break;
    }
  }
}

void resolve_constant(const ir::Node& node, const BoundDims& bound, LoweringNode& prepared) {
  const auto& v = node.attrs.at("value");
  if (auto* x = std::get_if<double>(&v))
    prepared.value = *x;
  else if (auto* i = std::get_if<std::int64_t>(&v))
    prepared.value = static_cast<double>(*i);
  else if (std::get<sem::Dim>(v).is_const())
    prepared.value = static_cast<double>(std::get<sem::Dim>(v).value());
  else if (auto b = bound.find(std::get<sem::Dim>(v).key()); b != bound.end())
    prepared.value_dim = b->second;
}

}  // namespace

PreparedLowering prepare_lowering(const ir::Kernel& lowering, const sem::InstrTable& isa) {
  BoundDims bound = operand_dims(lowering);
  PreparedLowering prepared;
  prepared.nodes.resize(lowering.nodes.size());
  for (std::size_t m = 0; m < lowering.nodes.size(); ++m) {
    const ir::Node& node = lowering.nodes[m];
    LoweringNode& step = prepared.nodes[m];
    resolve_shape(node, bound, step);
    if (node.param >= 0) {
      step.kind = LoweringNode::Operand;
    } else if (node.op == "const" || node.op == "dim") {
      step.kind = LoweringNode::Constant;
      resolve_constant(node, bound, step);
    } else if (node.op == "reciprocal" && node.inputs.size() == 1 &&
               prepared.nodes[node.inputs[0]].kind == LoweringNode::Constant) {
      step.kind = LoweringNode::Constant;  // 1 / F of a size F: a constant, no instruction
      step.reciprocal = true;
    } else if (classify(node) == OpClass::Layout &&
               prepared.nodes[node.inputs[0]].kind == LoweringNode::Constant) {
      step.kind = LoweringNode::ConstantLayout;
    } else {
      step.spec = isa.find(node.op);
    }
  }
  return prepared;
}

}  // namespace ts::lower

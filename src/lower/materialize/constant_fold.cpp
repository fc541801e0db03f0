// Constant folding: a kernel's constants are uniform tensors, so an element-wise op over
// constants is a constant too, its value the op on 0-d operands (evaluated by the interpreter in
// double precision). Values in, value out.
#include <fmt/format.h>

#include "prefix.h"
#include "tilesweep/ir/graph_edit.h"
#include "tilesweep/ir/interpreter.h"
#include "tilesweep/lower/tile_op.h"

namespace ts::lower {

double constant_value(const ir::Node& n, const sem::DimEnv& env) {
  const auto& v = n.attrs.at("value");
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return static_cast<double>(std::get<sem::Dim>(v).evaluate(env).value());
}

Lowered<double> fold_constant(const ir::Kernel& k, int node,
                              const std::vector<std::optional<double>>& consts,
                              const sem::DimEnv& dims) {
  const ir::Node& n = k.nodes[node];
  if (classify(n) == OpClass::Layout) return consts[n.inputs[0]].value();
  if (n.spec->broadcast != std::vector<std::string>{"S"})
    return NoProgram{
        fmt::format("'{}' of constants is not folded (only element-wise ops are)", n.op)};
  ir::Kernel scalar_kernel;
  std::vector<int> inputs;
  std::vector<ir::Tensor> values;
  for (int in : n.inputs) {
    ir::Param param;
    param.name = "c" + std::to_string(inputs.size());
    param.scalar = true;
    ir::Node input;
    input.op = "input";
    input.param = static_cast<int>(scalar_kernel.params.size());
    param.node = static_cast<int>(scalar_kernel.nodes.size());
    inputs.push_back(param.node);
    scalar_kernel.nodes.push_back(input);
    scalar_kernel.params.push_back(param);
    ir::Tensor value;
    value.data[0] = consts[in].value();
    values.push_back(value);
  }
  scalar_kernel.outputs = {ir::add_op(scalar_kernel, *n.spec, inputs, n.attrs, n.loc)};
  return ir::evaluate(scalar_kernel, dims, values, ir::Precision::F64)[0].data[0];
}

}  // namespace ts::lower

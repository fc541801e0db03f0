// The reference interpreter: executes a kernel graph on concrete tensors by evaluating each
// node's element expression (from the op semantics) at every output index. It defines what a
// kernel computes; every lowering and variant is checked against it.
#pragma once

#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/ir/tensor.h"

namespace ts::ir {

// F64 evaluates in double precision. F32 rounds the inputs and every node's result to float32
// (each op's arithmetic inside one element runs in double, then rounds once), which is what a
// float32 NumPy program computes to within a few ulps per op.
enum class Precision { F64, F32 };

// Binds the kernel's dims: the given values, plus any dim an input tensor's shape determines.
// Throws UserError for a dim that stays unbound, is not positive, or conflicts with an input.
sem::DimEnv bind_dims(const Kernel& k, const sem::DimEnv& given,
                      const std::vector<const Tensor*>& inputs);

// `inputs` has one tensor per parameter (0-d for scalars). Throws UserError when a dim is
// unbound, a precondition fails (naming it and the dims), or an input has the wrong shape.
std::vector<Tensor> evaluate(const Kernel& k, const sem::DimEnv& dims,
                             const std::vector<Tensor>& inputs, Precision precision);

// Concrete shape of a symbolic shape under `dims`.
std::vector<std::int64_t> concrete_shape(const std::vector<Dim>& shape, const sem::DimEnv& dims);

}  // namespace ts::ir

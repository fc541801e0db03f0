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
// BF16 is the kernel run in bf16 as a NeuronCore runs it: every tensor input and every op's
// result is stored in bf16 (round_bf16: fp32, then round to nearest even), as the instruction
// writing an SBUF/HBM tile of a bf16 kernel casts its fp32 result ("several NKI ISA operations
// convert input values through an intermediate float32 representation before writing them in
// the destination data type": NKI ISA common fields, Type Casting); sums and products inside an
// op (matmul contractions, reductions) accumulate in fp32, rounding after every step, as PSUM
// does ("the matmul accumulation and results are always in float32": nki.isa.nc_matmul); a
// matmul's bf16 result is its fp32 PSUM value cast when it is copied out. Python numbers
// (literals, scalar parameters such as eps) stay fp32 immediates. The model rounds once per op,
// not once per instruction an op is lowered to, and adds in the interpreter's order. f8 values
// (inputs and results whose dtype is f8) are stored as float8_e4m3, the f8 tile they live in;
// a matmul of f8 tiles still accumulates in fp32 PSUM and rounds once, when it is copied out.
// Values a cast or an op's spec pins keep their own dtype (an iota past 256 stays exact).
enum class Precision { F64, F32, BF16 };

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

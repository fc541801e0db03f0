// Human-readable text of a kernel graph (what `tilesweep check` prints).
#pragma once

#include <string>

#include "tilesweep/ir/graph.h"

namespace ts::ir {

// The signature, dims, one line per op node with its inferred dtype and shape and source line,
// the outputs and the shape preconditions.
std::string print_kernel(const Kernel& k);

// The outputs as nested calls, e.g. `mul(matmul(x, w), rsqrt(...))`; shape-only attributes
// (slice bounds) are kept, so equal texts mean equal computations.
std::string expression_text(const Kernel& k);

// `name: f32[M, N]` signature of the kernel: `kernel(x: f32[M, K], eps: f32 = 1e-06) -> f32[M, N]`.
std::string kernel_signature(const Kernel& k);

}  // namespace ts::ir

// Imports an NKI kernel (Python source, either dialect) into the simulator's program form, so
// that `tilesweep time` can simulate it and the functional interpreter (sim::execute) can run it
// on numbers. See src/nki_import/README.md for the constructs accepted and the rules used where
// the Neuron compiler would choose (engines of nl.* functions, multi-buffering, masks, spills).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tilesweep/ir/dtype.h"
#include "tilesweep/lower/program.h"
#include "tilesweep/target/target.h"

namespace ts::nki {

// One `--arg`: a tensor `NAME=DTYPE[D0,D1,...]` or a scalar `NAME=VALUE`.
struct KernelArg {
  std::string name;
  bool scalar = false;
  double value = 0;      // scalar
  bool integer = false;  // scalar written without a point or exponent
  ir::DType dtype = ir::DType::F32;
  std::vector<std::int64_t> shape;
};

// Parses one `--arg` text; UserError naming --arg and how to write it.
KernelArg parse_kernel_arg(const std::string& text);

struct ImportedKernel {
  lower::Program program;
  std::vector<std::string> inputs;   // tensor parameters, in the order sim::execute takes them
  std::vector<std::string> outputs;  // returned arrays, in sim::execute's output order
};

// The functions of `source` decorated with nki.jit (either dialect), in file order.
std::vector<std::string> jit_kernels(std::string_view source, const std::string& file);

// Translates kernel `kernel` of `source` (empty: the file's single @nki.jit function) at the
// given arguments for target `t`. UserError with file:line:col for an unsupported construct or
// a shape error in the kernel; UserError naming --arg for a missing or unknown argument.
ImportedKernel import_kernel(std::string_view source, const std::string& file,
                             const std::string& kernel, const std::vector<KernelArg>& args,
                             const target::Target& t);

}  // namespace ts::nki

// The options that name one kernel, shared by the verbs that work on one (eval, variants, lower,
// score, ...): its file, --kernel, extra --ops and, where a verb needs them, --target and
// --shape; and the sequence they drive: load_ops -> load_module -> the kernel -> its dims.
// Each add_* registers one option, so a verb keeps its own order (and help text) of options.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/semantics/dim.h"
#include "tilesweep/semantics/op_spec.h"
#include "tilesweep/target/target.h"

namespace ts::cli {

struct KernelOptions {
  std::string file, kernel, target = "trn1", shape;
  std::vector<std::string> ops;
  int cores = 1;

  void add_file(CLI::App* cmd, const std::string& help = "kernel file");
  void add_kernel(CLI::App* cmd);
  void add_target(CLI::App* cmd);
  void add_shape(CLI::App* cmd);  // -s,--shape, required
  void add_ops(CLI::App* cmd, const std::string& help = "extra op semantics file (TOML)");
  void add_cores(CLI::App* cmd);  // --cores N: NeuronCores a candidate may use, at most
};

// --cores checked against the target (1 .. its NeuronCores per chip); UserError otherwise.
void check_cores(const KernelOptions& o, const target::Target& t);

// The kernel the options name, with the op table and module it points into. Built in place
// (neither copied nor moved: the kernel's nodes point into the op table). Throws UserError for
// an unreadable --ops or kernel file, or a kernel the file lacks.
class LoadedKernel {
 public:
  explicit LoadedKernel(const KernelOptions& o);
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

  const sem::OpTable& ops() const { return ops_; }
  const ir::Kernel& kernel() const { return kernel_; }

 private:
  sem::OpTable ops_;
  ir::Module module_;
  const ir::Kernel& kernel_;
};

// --shape parsed and checked against `k` (every dim given, none unknown, preconditions hold).
sem::DimEnv kernel_dims(const KernelOptions& o, const ir::Kernel& k);

}  // namespace ts::cli

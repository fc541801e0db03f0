#include "kernel_options.h"

#include "args.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/sim/cores.h"

namespace ts::cli {

void KernelOptions::add_file(CLI::App* cmd, const std::string& help) {
  cmd->add_option("file", file, help)->required();
}

void KernelOptions::add_kernel(CLI::App* cmd) {
  cmd->add_option("-k,--kernel", kernel, "kernel name (optional when the file has one kernel)");
}

void KernelOptions::add_target(CLI::App* cmd) {
  cmd->add_option("-t,--target", target, "target: trn1, trn2, trn3");
}

void KernelOptions::add_shape(CLI::App* cmd) {
  cmd->add_option("-s,--shape", shape, "dims, e.g. M=4096,K=1024,N=2048")->required();
}

void KernelOptions::add_ops(CLI::App* cmd, const std::string& help) {
  cmd->add_option("--ops", ops, help);
}

void KernelOptions::add_cores(CLI::App* cmd) {
  cmd->add_option("--cores", cores,
                  "NeuronCores a candidate may split its outer loops over, at most (1 .. the "
                  "target's cores per chip: trn1 2, trn2 8, trn3 8; the search tries 1, 2, 4, .. "
                  "and N)");
}

void check_cores(const KernelOptions& o, const target::Target& t) {
  sim::check_cores(t, o.cores, "--cores");
}

LoadedKernel::LoadedKernel(const KernelOptions& o)
    : ops_(load_ops(o.ops)),
      module_(ir::load_module(o.file, ops_)),
      kernel_(module_.kernel(o.kernel)) {}

sem::DimEnv kernel_dims(const KernelOptions& o, const ir::Kernel& k) {
  sem::DimEnv dims = parse_shape_arg(o.shape);
  check_dims(k, dims);
  return dims;
}

}  // namespace ts::cli

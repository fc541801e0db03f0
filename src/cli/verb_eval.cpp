// `tilesweep eval FILE.py --kernel K --shape M=..`: run the reference interpreter on seeded
// random or given .npy inputs; print output statistics; write outputs as .npy.
#include <cmath>
#include <iostream>
#include <map>
#include <random>

#include "args.h"
#include "kernel_options.h"
#include "tilesweep/base/error.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/interpreter.h"
#include "tilesweep/ir/npy.h"
#include "verbs.h"

namespace ts::cli {

namespace {

struct Stats {
  double min = INFINITY, max = -INFINITY, mean = 0, l2 = 0;
  std::int64_t nonfinite = 0;
};

Stats stats(const ir::Tensor& t) {
  Stats s;
  double sum = 0, sq = 0;
  std::int64_t n = 0;
  for (double v : t.data) {
    if (!std::isfinite(v)) {
      ++s.nonfinite;
      continue;
    }
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    sum += v;
    sq += v * v;
    ++n;
  }
  s.mean = n ? sum / static_cast<double>(n) : NAN;
  s.l2 = std::sqrt(sq);
  return s;
}

std::string output_path(const std::string& out, std::size_t i, std::size_t count) {
  if (count == 1) return out;
  std::string stem = out;
  if (stem.size() > 4 && stem.compare(stem.size() - 4, 4, ".npy") == 0)
    stem.resize(stem.size() - 4);
  return fmt::format("{}_{}.npy", stem, i);
}

}  // namespace

VerbRun add_eval(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "eval", "run the reference interpreter on a kernel with random (seeded) or given inputs");
  struct Opts {
    KernelOptions kernel;
    std::string out, precision = "f64";
    std::uint64_t seed = 0;
    std::int64_t default_dim = 0;
    std::vector<std::string> inputs;
  };
  auto o = std::make_shared<Opts>();
  o->kernel.add_file(cmd, "kernel file (.py)");
  o->kernel.add_kernel(cmd);
  cmd->add_option("--shape", o->kernel.shape,
                  "dim values, e.g. M=64,N=32 (dims fixed by --input files may be left out)");
  cmd->add_option("--default-dim", o->default_dim,
                  "value for every dim not given by --shape or an input");
  cmd->add_option("--seed", o->seed, "seed for random inputs (uniform in [-1, 1))");
  cmd->add_option("--input", o->inputs, "NAME=FILE.npy: use this array for parameter NAME");
  cmd->add_option("--out", o->out,
                  "write the output(s) as .npy (several outputs: OUT_0.npy, OUT_1.npy, ...)");
  cmd->add_option(
         "--precision", o->precision,
         "f64, f32, or bf16 (the kernel run in bf16 as a NeuronCore runs it: every tensor stored "
         "in bf16, f8 tensors in float8_e4m3, round to nearest even; sums inside an op, matmuls' "
         "PSUM included, in fp32; numbers fp32)")
      ->check(CLI::IsMember({"f64", "f32", "bf16"}));
  o->kernel.add_ops(cmd);
  return [o, cmd]() {
    if (!*cmd) return -1;
    LoadedKernel loaded(o->kernel);
    const ir::Kernel& k = loaded.kernel();

    std::map<std::string, ir::Tensor> given;
    for (const auto& text : o->inputs) {
      auto [name, path] = parse_input_arg(text);
      bool known = false;
      for (const auto& p : k.params) known = known || p.name == name;
      if (!known)
        throw UserError(
            fmt::format("error: --input: kernel '{}' has no parameter '{}'", k.name, name));
      if (given.count(name))
        throw UserError(fmt::format("error: --input: '{}' is given twice", name));
      given[name] = ir::read_npy(path);
    }
    std::vector<const ir::Tensor*> known;
    for (const auto& p : k.params) known.push_back(given.count(p.name) ? &given[p.name] : nullptr);
    sem::DimEnv dims = o->kernel.shape.empty() ? sem::DimEnv{} : parse_shape_arg(o->kernel.shape);
    if (o->default_dim > 0) {
      // Dims fixed by input files win over the default.
      for (const auto& d : k.dims) {
        bool from_input = false;
        for (std::size_t i = 0; i < k.params.size(); ++i)
          for (const auto& pd : k.params[i].shape)
            from_input = from_input || (known[i] && pd == sem::Dim::symbol(d));
        if (!from_input) dims.emplace(d, o->default_dim);
      }
    }
    dims = ir::bind_dims(k, dims, known);

    std::mt19937_64 rng(o->seed);
    std::uniform_real_distribution<double> uni(-1.0, 1.0);
    std::vector<ir::Tensor> inputs;
    for (const auto& p : k.params) {
      if (auto it = given.find(p.name); it != given.end()) {
        inputs.push_back(it->second);
        continue;
      }
      ir::Tensor t(ir::concrete_shape(p.shape, dims));
      if (p.scalar && p.default_value)
        t.data[0] = *p.default_value;
      else
        for (double& v : t.data) v = uni(rng);
      inputs.push_back(std::move(t));
    }
    auto precision = o->precision == "f32"    ? ir::Precision::F32
                     : o->precision == "bf16" ? ir::Precision::BF16
                                              : ir::Precision::F64;
    std::vector<ir::Tensor> outs = ir::evaluate(k, dims, inputs, precision);

    std::string env;
    for (const auto& [n, v] : dims) env += (env.empty() ? "" : ",") + n + "=" + std::to_string(v);
    std::cout << fmt::format("kernel {} at {} ({}, seed {})\n", k.name,
                             env.empty() ? "no dims" : env, o->precision, o->seed);
    for (std::size_t i = 0; i < outs.size(); ++i) {
      Stats s = stats(outs[i]);
      std::cout << fmt::format(
          "  output {}: shape {} min {:.6g} max {:.6g} mean {:.6g} l2 {:.6g}{}\n", i,
          outs[i].shape_str(), s.min, s.max, s.mean, s.l2,
          s.nonfinite ? fmt::format(" non-finite {}", s.nonfinite) : "");
      if (!o->out.empty()) {
        std::string path = output_path(o->out, i, outs.size());
        // bf16 values are exact in float32 (.npy has no bf16).
        ir::write_npy(path, outs[i],
                      precision == ir::Precision::F64 ? ir::NpyType::F64 : ir::NpyType::F32);
        std::cout << "  wrote " << path << "\n";
      }
    }
    return 0;
  };
}

}  // namespace ts::cli

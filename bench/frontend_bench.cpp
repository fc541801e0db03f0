// Parsing and shape inference of every bundled benchmark kernel (the 20 Axon and 14 NKIBench
// files), from source text already in memory, and the reference interpreter on one kernel.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "tilesweep/base/source.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/interpreter.h"

namespace {

namespace fs = std::filesystem;

std::vector<std::pair<std::string, std::string>> suite_sources() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* suite : {"axon", "nkibench"}) {
    fs::path dir = fs::path(TS_SOURCE_DIR) / "jobs" / "kernels" / suite;
    for (const auto& f : fs::directory_iterator(dir))
      if (f.path().extension() == ".py")
        out.emplace_back(f.path().string(), ts::read_text_file(f.path().string()));
  }
  return out;
}

void BM_ParseAllSuiteKernels(benchmark::State& state) {
  auto sources = suite_sources();
  const auto& ops = ts::sem::OpTable::builtin();
  std::size_t nodes = 0;
  for (auto _ : state) {
    nodes = 0;
    for (const auto& [path, text] : sources) {
      ts::ir::Module m = ts::ir::parse_module(text, path, ops);
      for (const auto& k : m.kernels) nodes += k.nodes.size();
    }
    benchmark::DoNotOptimize(nodes);
  }
  state.counters["files"] = static_cast<double>(sources.size());
  state.counters["nodes"] = static_cast<double>(nodes);
}
BENCHMARK(BM_ParseAllSuiteKernels)->Unit(benchmark::kMillisecond);

void BM_InterpretRmsnormMatmul(benchmark::State& state) {
  fs::path f = fs::path(TS_SOURCE_DIR) / "jobs" / "kernels" / "axon" / "rmsnorm_matmul.py";
  ts::ir::Module m = ts::ir::load_module(f.string(), ts::sem::OpTable::builtin());
  const auto& k = m.kernels[0];
  std::int64_t n = state.range(0);
  ts::sem::DimEnv dims{{"M", n}, {"K", n}, {"N", n}};
  std::vector<ts::ir::Tensor> inputs;
  for (const auto& p : k.params) {
    ts::ir::Tensor t(ts::ir::concrete_shape(p.shape, dims));
    for (std::size_t i = 0; i < t.data.size(); ++i)
      t.data[i] = 0.001 * static_cast<double>(i % 1000);
    inputs.push_back(std::move(t));
  }
  for (auto _ : state)
    benchmark::DoNotOptimize(ts::ir::evaluate(k, dims, inputs, ts::ir::Precision::F64));
  state.counters["MACs/s"] = benchmark::Counter(static_cast<double>(n * n * n),
                                                benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_InterpretRmsnormMatmul)->Arg(64)->Arg(128)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

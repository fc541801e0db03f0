// The timing simulator on realistic candidate programs: hand-built ones (element-wise
// pipelines, tiled matmuls, row norms) and, for a few Axon kernels, candidates the materializer
// builds (every index of a small slice of each candidate space). Target: median <= 50 us per
// candidate.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>

#include "test_programs.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/lower/fusion.h"
#include "tilesweep/lower/synthesize.h"
#include "tilesweep/sim/simulate.h"

namespace {

using ts::target::Target;
namespace test = ts::sim::test;

const Target& trn2() { return ts::target::builtin_target("trn2"); }

void run(benchmark::State& state, const ts::lower::Program& p, bool extrapolate) {
  const ts::sim::SimOptions o{extrapolate, 0, false};
  for (auto _ : state) benchmark::DoNotOptimize(ts::sim::simulate(p, trn2(), o).latency_ns);
  auto r = ts::sim::simulate(p, trn2(), o);
  state.counters["latency_us"] = r.latency_ns / 1e3;
  state.counters["simulated"] = static_cast<double>(r.simulated);
  state.counters["instructions"] = static_cast<double>(p.insts.size());
}

void BM_Elementwise(benchmark::State& state) {
  run(state, test::elementwise(trn2(), state.range(0), 128, 2048, 3), state.range(1) != 0);
}
BENCHMARK(BM_Elementwise)
    ->Args({64, 1})
    ->Args({1024, 1})
    ->Args({1024, 0})
    ->Unit(benchmark::kMicrosecond);

void BM_Matmul(benchmark::State& state) {
  std::int64_t n = state.range(0);
  run(state, test::matmul(trn2(), n, n, n, ts::ir::DType::BF16, 3), state.range(1) != 0);
}
BENCHMARK(BM_Matmul)->Args({1024, 1})->Args({4096, 1})->Args({1024, 0})->Unit(
    benchmark::kMicrosecond);

void BM_Rownorm(benchmark::State& state) {
  run(state, test::rownorm(trn2(), state.range(0), 128, 4096, 2), true);
}
BENCHMARK(BM_Rownorm)->Arg(256)->Unit(benchmark::kMicrosecond);

// Materialized candidates of one Axon kernel: the first `count` indices of its space, each
// simulated once per benchmark iteration (time per candidate is the reported time / count).
void BM_Materialized(benchmark::State& state, const char* file, ts::sem::DimEnv dims) {
  auto module = ts::ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/axon/" + file,
                                    ts::sem::OpTable::builtin());
  const ts::ir::Kernel& k = module.kernels.front();
  ts::lower::SynthesisCache cache;
  auto choices = ts::lower::instruction_choices(k, trn2().isa, cache);
  ts::lower::CandidateSpace space({{&k, &choices}}, trn2(), dims);
  std::vector<ts::lower::Program> programs;
  for (std::int64_t i = 0; i < space.size() && programs.size() < 64; ++i) {
    if (auto p = space.materialize(i)) programs.push_back(std::move(*p));
  }
  if (programs.empty()) return state.SkipWithError("no candidate materializes");
  for (auto _ : state)
    for (const auto& p : programs)
      benchmark::DoNotOptimize(ts::sim::simulate(p, trn2()).latency_ns);
  state.counters["candidates"] = static_cast<double>(programs.size());
  // Median over the candidates of one simulation each, timed alone.
  std::vector<double> us;
  for (const auto& p : programs) {
    auto t0 = std::chrono::steady_clock::now();
    for (int rep = 0; rep < 20; ++rep)
      benchmark::DoNotOptimize(ts::sim::simulate(p, trn2()).latency_ns);
    us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
        20);
  }
  std::sort(us.begin(), us.end());
  state.counters["median_us"] = us[us.size() / 2];
  state.counters["max_us"] = us.back();
}
BENCHMARK_CAPTURE(BM_Materialized, matmul, "matmul.py", {{"M", 2048}, {"K", 2048}, {"N", 2048}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Materialized, rmsnorm, "rmsnorm.py", {{"M", 4096}, {"N", 4096}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Materialized, softmax, "softmax.py", {{"M", 4096}, {"N", 2048}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
BENCHMARK_MAIN();

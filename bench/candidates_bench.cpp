// Cost of enumerating and materializing candidates (decode index i, build its Program) and of
// scoring them (materialize + capacity + simulate), per candidate, over every candidate of a
// kernel's space at one shape on trn2 (swiglu_mlp and gqa: 85% of the axon-suite sweep's
// candidates). The proofs (variants, synthesis) are done once in set-up.
//
// Materialize: candidates alone, scattered over the space (a program built from scratch each).
// Enumerate and Score: as a sweep visits them, runs of 256 consecutive indices (a unit) through
// one CandidateCursor, the runs scattered over the space.
//
// Materialize and Enumerate run a fixed number of iterations, so that two builds make exactly
// the same candidates: bench/count_instructions.sh compares them in instructions under
// callgrind (instrumentation switched on after the fixture's proofs), which a shared machine's
// timings cannot settle to a few percent.
#include <benchmark/benchmark.h>
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_START_INSTRUMENTATION
#endif

#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/fusion.h"
#include "tilesweep/sweep/prepare.h"
#include "tilesweep/sweep/score.h"

namespace {

using namespace ts;

struct Fixture {
  ir::Module module;
  lower::SynthesisCache cache;
  sweep::PreparedKernel prepared;
  std::unique_ptr<lower::CandidateSpace> space;

  Fixture(const std::string& file, sem::DimEnv dims)
      : module(ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/" + file,
                               sem::OpTable::builtin())) {
    const target::Target& t = target::builtin_target("trn2");
    prepared = sweep::prepare_kernel(module.kernels.front(), t.isa, cache);
    space = std::make_unique<lower::CandidateSpace>(prepared.space_variants(), t, std::move(dims));
  }
};

Fixture& fixture(int which) {
  switch (which) {
    case 0: {
      static Fixture f("axon/rmsnorm_matmul.py", {{"M", 2048}, {"K", 2048}, {"N", 2048}});
      return f;
    }
    case 1: {
      static Fixture f("axon/softmax.py", {{"M", 4096}, {"N", 4096}});
      return f;
    }
    case 2: {
      static Fixture f("axon/silu_mlp.py", {{"M", 2048}, {"K", 2048}, {"N", 2048}});
      return f;
    }
    case 3: {
      static Fixture f("axon/swiglu_mlp.py", {{"M", 4096}, {"K", 4096}, {"N", 4096}});
      return f;
    }
    default: {
      static Fixture f("axon/gqa.py", {{"M", 4096}, {"N", 4096}});
      return f;
    }
  }
}

void Materialize(benchmark::State& state) {
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  CALLGRIND_START_INSTRUMENTATION;
  std::int64_t i = 0, n = f.space->size();
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.space->materialize(i));
    i = (i + 7919) % n;
  }
  state.SetLabel(std::to_string(n) + " candidates");
}

// The next index of a walk in runs of 256 consecutive candidates, the runs scattered.
std::int64_t next_in_run(std::int64_t i, std::int64_t& run, std::int64_t n) {
  if (++i % 256 != 0 && i < n) return i;
  run = (run + 7919) % ((n + 255) / 256);
  return run * 256;
}

void Enumerate(benchmark::State& state) {
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  CALLGRIND_START_INSTRUMENTATION;
  lower::CandidateCursor cursor(*f.space);
  std::int64_t i = 0, run = 0, n = f.space->size(), visited = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(&cursor.at(i));
    ++visited;
    i = next_in_run(i, run, n);
  }
  state.counters["built"] = static_cast<double>(cursor.built()) /
                            static_cast<double>(visited);  // programs built per candidate
}

void Score(benchmark::State& state) {
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  CALLGRIND_START_INSTRUMENTATION;
  const target::Target& t = target::builtin_target("trn2");
  lower::CandidateCursor cursor(*f.space);
  std::int64_t i = 0, run = 0, n = f.space->size();
  double simulated = 0, scored = 0;
  for (auto _ : state) {
    sweep::CandidateScore s = sweep::score_candidate(cursor, i, t);
    simulated += static_cast<double>(s.sim.simulated), scored += 1;
    benchmark::DoNotOptimize(s);
    i = next_in_run(i, run, n);
  }
  state.counters["simulated"] =
      simulated / scored;  // instruction executions simulated per candidate
}

}  // namespace

BENCHMARK(Materialize)->DenseRange(0, 4)->Iterations(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(Enumerate)->DenseRange(0, 4)->Iterations(3000)->Unit(benchmark::kMicrosecond);
BENCHMARK(Score)->DenseRange(0, 4)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();

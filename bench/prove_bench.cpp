// One equivalence query end to end (fresh Z3 context each time, no cache): the Axon running
// example, the multiply moved past the matmul in RMSNorm+MatMul (Axon reports 0.15 s), and a
// refutation that needs the reference interpreter's witness.
#include <benchmark/benchmark.h>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/verify/prove.h"

namespace {

ts::ir::Module parse(const char* src) {
  return ts::ir::parse_module(src, "bench.py", ts::sem::OpTable::builtin());
}

void run(benchmark::State& state, const char* a, const char* b, ts::verify::VerdictKind want) {
  ts::ir::Module ma = parse(a), mb = parse(b);
  for (auto _ : state) {
    auto v = ts::verify::prove_equivalent(ma.kernels[0], mb.kernels[0]);
    if (v.kind != want) state.SkipWithError("unexpected verdict");
  }
}

void BM_ProveRmsnormSwap(benchmark::State& state) {
  run(state,
      "def f(x: f32[M, K], w: f32[K, N], eps: f32):\n    rms = rsqrt(mean(square(x), axis=1, "
      "keepdims=True) + eps)\n    return matmul(x * rms, w)\n",
      "def f(x: f32[M, K], w: f32[K, N], eps: f32):\n    rms = rsqrt(mean(square(x), axis=1, "
      "keepdims=True) + eps)\n    return matmul(x, w) * rms\n",
      ts::verify::VerdictKind::Equivalent);
}
BENCHMARK(BM_ProveRmsnormSwap)->Unit(benchmark::kMillisecond);

void BM_ProveMatmulAssociativity(benchmark::State& state) {
  run(state, "def f(a: f32[M, K], b: f32[K, N], c: f32[N, P]):\n    return (a @ b) @ c\n",
      "def f(a: f32[M, K], b: f32[K, N], c: f32[N, P]):\n    return a @ (b @ c)\n",
      ts::verify::VerdictKind::Equivalent);
}
BENCHMARK(BM_ProveMatmulAssociativity)->Unit(benchmark::kMillisecond);

void BM_RefuteSiluPastMultiply(benchmark::State& state) {
  run(state, "def f(x: f32[M, N], y: f32[M, N]):\n    return silu(x * y)\n",
      "def f(x: f32[M, N], y: f32[M, N]):\n    return silu(x) * y\n",
      ts::verify::VerdictKind::NotEquivalent);
}
BENCHMARK(BM_RefuteSiluPastMultiply)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

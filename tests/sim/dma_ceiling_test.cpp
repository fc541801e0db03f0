// The DMA engines' aggregate rate is a ceiling: however a program's transfers are spread over
// the core's engines (tiles of few partitions use few engines, rotating through them), no engine
// moves two transfers at once, so the DMA engine-time averaged over the engines (busy(Dma))
// never exceeds the elapsed time. A program of independent loads only is limited by that ceiling.
#include <gtest/gtest.h>

#include "program_builder.h"
#include "tilesweep/sim/simulate.h"

namespace ts::sim {
namespace {

using test::ProgramBuilder;

struct CeilingCase {
  const char* target;
  std::vector<std::int64_t> partitions;  // one load per entry in each iteration, in this order
  std::int64_t cols;                     // f32 columns of every tile
  bool extrapolate;
  int loops = 1;  // the same loads in this many loops, one after the other
};

// Independent loads of [partitions[j], cols] tiles, `trips` times; 4 buffers each so that
// nothing but the DMA engines orders them.
lower::Program independent_loads(const target::Target& t, const CeilingCase& c,
                                 std::int64_t trips) {
  ProgramBuilder b(t);
  for (int l = 0; l < c.loops; ++l) {
    int loop = b.loop(0, trips);
    for (std::size_t j = 0; j < c.partitions.size(); ++j) {
      std::int64_t rows = c.partitions[j];
      std::string name = "x" + std::to_string(l) + "_" + std::to_string(j);
      int x = b.hbm(name, ir::DType::F32, {rows * trips, c.cols});
      int tile = b.sbuf(name + "_t", ir::DType::F32, {rows, c.cols}, 4);
      b.load(loop, tile, x, loop);
    }
  }
  return b.p;
}

TEST(DmaCeiling, EngineTimeNeverExceedsElapsedTime) {
  const CeilingCase cases[] = {
      // One-engine tiles then a tile over all engines: the wide transfer must wait for the
      // engine the narrow one holds, not only for the first two engines of its span.
      {"trn1", {8, 128}, 1024, false},
      {"trn1", {8, 128}, 1024, true},
      {"trn1", {8, 8, 128}, 512, false},
      {"trn1", {16, 128, 8}, 2048, false},
      {"trn1", {1, 128}, 4096, true},
      {"trn1", {32, 64, 128}, 1024, true},
      {"trn2", {8, 128}, 1024, false},
      {"trn2", {16, 128, 8}, 2048, true},
      {"trn1", {128}, 1024, true},
      // A second loop after an extrapolated one: the skipped iterations kept the engines busy,
      // the second loop's loads find no free time back at the start.
      {"trn1", {128}, 256, true, 2},
      {"trn1", {128, 128}, 1024, true, 2},
      {"trn1", {8, 128}, 512, true, 2},
      {"trn2", {128}, 256, true, 3},
  };
  for (const auto& c : cases) {
    const target::Target& t = target::builtin_target(c.target);
    lower::Program p = independent_loads(t, c, 64);
    SimResult r = simulate(p, t, SimOptions{c.extrapolate, 0, false});
    std::string what = std::string(c.target) + " tiles of " + std::to_string(c.partitions[0]) +
                       ".. partitions, " + std::to_string(c.cols) + " cols";
    ASSERT_TRUE(r.feasible) << what << ": " << r.reason;
    EXPECT_GT(r.busy(sem::Engine::Dma), 0) << what;
    EXPECT_LE(r.busy(sem::Engine::Dma), r.latency_ns * (1 + 1e-9)) << what;
  }
}

struct PipelineCase {
  const char* target;
  int chain;           // Scalar activations between the load and the store of a tile
  std::int64_t trips;  // row tiles
  std::int64_t cols;   // f32 columns
  int bufs;
};

// load -> `chain` element-wise steps (Scalar, Vector, GpSimd in turn: a pipeline over the
// engines, many periods deep) -> store per [128, cols] row tile, 3 buffers of each: the first
// loads run ahead into the DMA time the stores do not use yet; the later ones share the engines
// with the stores.
lower::Program prefetching_pipeline(const target::Target& t, const PipelineCase& c) {
  ProgramBuilder b(t);
  int x = b.hbm("x", ir::DType::F32, {128 * c.trips, c.cols});
  int out = b.hbm("out", ir::DType::F32, {128 * c.trips, c.cols});
  int bias = b.sbuf("bias", ir::DType::F32, {128, 1});
  int in = b.sbuf("in", ir::DType::F32, {128, c.cols}, c.bufs);
  int i = b.loop(0, c.trips);
  b.load(i, in, x, i);
  int cur = in;
  for (int k = 0; k < c.chain; ++k) {
    int next = b.sbuf("a" + std::to_string(k), ir::DType::F32, {128, c.cols}, c.bufs);
    if (k % 3 == 0) b.op(i, "activation", sem::Engine::Scalar, {cur, bias}, next);
    if (k % 3 == 1) b.op(i, "tensor_scalar", sem::Engine::Vector, {cur, bias}, next);
    if (k % 3 == 2) b.op(i, "tensor_scalar", sem::Engine::GpSimd, {cur, bias}, next);
    cur = next;
  }
  b.store(i, cur, out, i);
  return b.p;
}

TEST(DmaCeiling, PrefetchedLoadsDoNotMakeALoopLookPeriodic) {
  // While the first loads run ahead, the loop's compute and stores look periodic, but the DMA
  // time those loads used up is gone for the rest: the extrapolated loop must match the full
  // simulation, and stay under the engines' rate.
  std::vector<PipelineCase> cases;
  for (const char* target : {"trn1", "trn2"})
    for (int chain = 1; chain <= 8; ++chain)
      for (std::int64_t trips : {8, 12, 16, 32})
        for (std::int64_t cols : {128, 256, 512, 1024, 2048})
          for (int bufs : {2, 3, 4}) cases.push_back({target, chain, trips, cols, bufs});
  for (const auto& c : cases) {
    const target::Target& t = target::builtin_target(c.target);
    lower::Program p = prefetching_pipeline(t, c);
    SimResult full = simulate(p, t, SimOptions{false, 0, false});
    SimResult fast = simulate(p, t, SimOptions{true, 0, false});
    std::string what = std::string(c.target) + " chain " + std::to_string(c.chain) + " trips " +
                       std::to_string(c.trips) + " cols " + std::to_string(c.cols) + " bufs " +
                       std::to_string(c.bufs);
    if (!full.feasible) continue;
    EXPECT_LE(full.busy(sem::Engine::Dma), full.latency_ns * (1 + 1e-9)) << what;
    EXPECT_LE(fast.busy(sem::Engine::Dma), fast.latency_ns * (1 + 1e-9)) << what;
    EXPECT_NEAR(fast.latency_ns, full.latency_ns, 0.02 * full.latency_ns) << what;
  }
}

}  // namespace
}  // namespace ts::sim

#include "tilesweep/sim/simulate.h"

#include <gtest/gtest.h>

#include "program_builder.h"

namespace ts::sim {
namespace {

using sem::Engine;
using test::ProgramBuilder;

const target::Target& trn2() { return target::builtin_target("trn2"); }

SimResult run(const lower::Program& p, bool extrapolate = false) {
  return simulate(p, trn2(), SimOptions{extrapolate, 0, true});
}

// The trace events of one instruction, in order.
std::vector<TraceEvent> events(const SimResult& r, int inst) {
  std::vector<TraceEvent> out;
  for (const auto& e : r.trace)
    if (e.inst == inst) out.push_back(e);
  return out;
}

struct MatmulCase {
  ir::DType dtype;
  std::int64_t n;
  double cycles;  // fact sheet §3.1 / §7: issue interval of back-to-back nc_matmul
};

TEST(Calibration, MatmulIssueInterval) {
  const MatmulCase cases[] = {{ir::DType::BF16, 512, 512},
                              {ir::DType::F32, 512, 2048},
                              {ir::DType::BF16, 128, 128},
                              {ir::DType::BF16, 32, 64}};
  for (const auto& c : cases) {
    ProgramBuilder b(trn2());
    int st = b.sbuf("stationary", c.dtype, {128, 128});
    int mv = b.sbuf("moving", c.dtype, {128, c.n});
    int acc = b.psum("acc", {128, c.n});
    int k = b.loop(0, 16);
    int mm = b.op(k, "nc_matmul", Engine::Tensor, {st, mv}, acc, {}, k);
    SimResult r = run(b.p);
    auto ev = events(r, mm);
    ASSERT_EQ(ev.size(), 16u);
    double ns = c.cycles / 2.4;
    for (std::size_t i = 1; i < ev.size(); ++i)
      EXPECT_NEAR(ev[i].start_ns - ev[i - 1].start_ns, ns, 1e-6) << c.n;
    EXPECT_NEAR(r.latency_ns, 16 * ns, 1e-6);
    EXPECT_NEAR(r.busy(Engine::Tensor), 16 * ns, 1e-6);
    EXPECT_EQ(r.instructions, 16);
  }
}

struct VectorCase {
  const char* instr;
  Engine engine;
  std::int64_t n;
  double cycles;  // per instruction, independent back-to-back
  double clock_ghz;
};

TEST(Calibration, ElementwiseEngines) {
  // Vector: the isa formula (one input N, two inputs 2N, at least MIN_II 64) + 144 fixed (K1);
  // Scalar: the formula alone; GpSimd running a shared instruction: + GPSIMD_START 150.
  const VectorCase cases[] = {
      {"tensor_scalar", Engine::Vector, 512, 512 + 144, 0.96},
      {"tensor_tensor", Engine::Vector, 512, 1024 + 144, 0.96},
      {"tensor_scalar", Engine::Vector, 16, 64 + 144, 0.96},
      {"activation", Engine::Scalar, 512, 512, 1.2},
      {"tensor_scalar", Engine::GpSimd, 512, 512 + 150, 1.2},
  };
  for (const auto& c : cases) {
    ProgramBuilder b(trn2());
    int x = b.sbuf("x", ir::DType::F32, {128, c.n});
    int s = b.sbuf("s", ir::DType::F32, {128, 1});
    int y = b.sbuf("y", ir::DType::F32, {128, c.n});
    int loop = b.loop(0, 8);
    std::vector<int> in =
        std::string(c.instr) == "tensor_tensor" ? std::vector{x, x} : std::vector{x, s};
    int op = b.op(loop, c.instr, c.engine, in, y);
    SimResult r = run(b.p);
    auto ev = events(r, op);
    ASSERT_EQ(ev.size(), 8u);
    EXPECT_NEAR(ev[1].start_ns - ev[0].start_ns, c.cycles / c.clock_ghz, 1e-6) << c.instr;
    EXPECT_NEAR(r.busy(c.engine), 8 * c.cycles / c.clock_ghz, 1e-6) << c.instr;
  }
}

// A strided operand (Window::step): the same element rate while the step stays within the
// target's full-rate stride (16 B: f32 steps 1, 2, 4), half the rate past it (A1): tensor_tensor
// over [128, 512] windows, 1024 formula cycles + 144 fixed, or 2 x 1024 + 144.
TEST(Calibration, StridedOperandsPastTheFullRateStrideRunAtHalfRate) {
  const std::pair<std::int64_t, double> cases[] = {
      {1, 1024 + 144}, {2, 1024 + 144}, {4, 1024 + 144}, {8, 2048 + 144}};
  for (const auto& [step, cycles] : cases) {
    ProgramBuilder b(trn2());
    int x = b.sbuf("x", ir::DType::F32, {128, 512 * 8});
    int y = b.sbuf("y", ir::DType::F32, {128, 512});
    int loop = b.loop(0, 8);
    int op = b.op(loop, "tensor_tensor", Engine::Vector, {x, x}, y);
    lower::Window w{{}, 512, 0, step};
    b.p.insts[static_cast<std::size_t>(op)].in_window = {w, w};
    SimResult r = run(b.p);
    EXPECT_NEAR(r.busy(Engine::Vector), 8 * cycles / 0.96, 1e-6) << "step " << step;
  }
}

// S0: tensor_tensor takes 2N cycles with both inputs in SBUF (or both in PSUM), N with one in
// each (`psum_sbuf`); a PSUM input also pays the PSUM read (64 cycles, A1). The same with the
// cost variables the materializer gives (psum_sbuf 0: the simulator sets it) and with none.
TEST(Calibration, TensorTensorWithOneInputInPsumRunsAtOneElementPerCycle) {
  struct Case {
    const char* name;
    bool a_psum, b_psum, lowered_vars;
    double cycles;  // formula + 144 fixed + 64 per PSUM input
  };
  const Case cases[] = {
      {"both sbuf", false, false, false, 1024 + 144},
      {"psum, sbuf", true, false, false, 512 + 144 + 64},
      {"sbuf, psum", false, true, false, 512 + 144 + 64},
      {"both psum", true, true, false, 1024 + 144 + 2 * 64},
      {"psum, sbuf (lowered vars)", true, false, true, 512 + 144 + 64},
      {"both sbuf (lowered vars)", false, false, true, 1024 + 144},
  };
  for (const auto& c : cases) {
    ProgramBuilder b(trn2());
    int a = c.a_psum ? b.psum("a", {128, 512}) : b.sbuf("a", ir::DType::F32, {128, 512});
    int x = c.b_psum ? b.psum("x", {128, 512}) : b.sbuf("x", ir::DType::F32, {128, 512});
    int y = b.sbuf("y", ir::DType::F32, {128, 512});
    int loop = b.loop(0, 8);
    lower::CostVars vars;
    if (c.lowered_vars)
      vars = {{"p", 128},     {"f", 512},  {"P", 128},        {"N", 512},
              {"MIN_II", 64}, {"fp32", 1}, {"bytes", 262144}, {"psum_sbuf", 0}};
    b.op(loop, "tensor_tensor", Engine::Vector, {a, x}, y, vars);
    SimResult r = run(b.p);
    EXPECT_NEAR(r.busy(Engine::Vector), 8 * c.cycles / 0.96, 1e-6) << c.name;
  }
}

TEST(Calibration, DependentChainPaysAccessInit) {
  // y = f(x); x = f(y); ...: each result is readable 60 cycles (SBUF access init) after its end.
  ProgramBuilder b(trn2());
  int x = b.sbuf("x", ir::DType::F32, {128, 512});
  int s = b.sbuf("s", ir::DType::F32, {128, 1});
  int y = b.sbuf("y", ir::DType::F32, {128, 512});
  int loop = b.loop(0, 4);
  b.op(loop, "tensor_scalar", Engine::Vector, {x, s}, y);
  b.op(loop, "tensor_scalar", Engine::Vector, {y, s}, x);
  SimResult r = run(b.p);
  EXPECT_NEAR(r.latency_ns, (8 * 656 + 7 * 60) / 0.96, 1e-6);
}

TEST(Calibration, SingleEngineDma32KiB) {
  // Fact sheet §2.4 (P3): one DMA engine moves 32 KiB HBM -> SBUF in 1,416 ns on trn2. A
  // one-partition tile maps to one engine; its transfer follows the DGE start (600 ns).
  ProgramBuilder b(trn2());
  int x = b.hbm("x", ir::DType::F32, {1, 8192});
  int tile = b.sbuf("t", ir::DType::F32, {1, 8192});
  int ld = b.load(0, tile, x);
  SimResult r = run(b.p);
  auto ev = events(r, ld);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_NEAR(ev[0].end_ns - ev[0].start_ns, 1416, 0.02 * 1416);
  EXPECT_NEAR(ev[0].start_ns, 600, 1e-9);
  EXPECT_NEAR(r.hbm_read_bytes, 32768, 0);
  // The core's 16 engines: the same 32 KiB over 16 partitions and 2 engines takes half as long.
  ProgramBuilder w(trn2());
  int x2 = w.hbm("x", ir::DType::F32, {16, 512});
  int tile2 = w.sbuf("t", ir::DType::F32, {16, 512});
  int ld2 = w.load(0, tile2, x2);
  auto ev2 = events(run(w.p), ld2);
  // 2 KiB per partition runs at 80% of peak (efficiency table).
  EXPECT_NEAR(ev2[0].end_ns - ev2[0].start_ns, 16384 / (23 * 0.8), 1e-6);
}

// load -> func -> store over `trips` row tiles of [128, cols] f32, bufs copies of each tile.
lower::Program pipeline(std::int64_t trips, std::int64_t cols, int bufs, int cores = 1) {
  ProgramBuilder b(trn2());
  int x = b.hbm("x", ir::DType::F32, {128 * trips, cols});
  int out = b.hbm("out", ir::DType::F32, {128 * trips, cols});
  int in_t = b.sbuf("in", ir::DType::F32, {128, cols}, bufs);
  int bias = b.sbuf("bias", ir::DType::F32, {128, 1});
  int out_t = b.sbuf("res", ir::DType::F32, {128, cols}, bufs);
  int i = b.loop(0, trips);
  b.load(i, in_t, x, i);
  b.op(i, "activation", Engine::Scalar, {in_t, bias}, out_t);
  b.store(i, out_t, out, i);
  b.p.cores = cores;
  return b.p;
}

TEST(Overlap, DoubleBufferingPipelines) {
  SimResult one = run(pipeline(32, 2048, 1));
  SimResult two = run(pipeline(32, 2048, 2));
  SimResult three = run(pipeline(32, 2048, 3));
  EXPECT_LT(two.latency_ns, 0.8 * one.latency_ns);
  EXPECT_LE(three.latency_ns, two.latency_ns * 1.0001);
  double busiest = 0;
  for (double b : three.busy_ns) busiest = std::max(busiest, b);
  EXPECT_GE(three.latency_ns, busiest);
  EXPECT_LE(three.latency_ns, 1.1 * busiest);
  // Same work whatever the buffering.
  EXPECT_EQ(one.hbm_read_bytes, 32.0 * 128 * 2048 * 4);
  EXPECT_EQ(one.hbm_write_bytes, one.hbm_read_bytes);
  EXPECT_NEAR(one.busy(Engine::Dma), three.busy(Engine::Dma), 1e-6);
}

TEST(Ordering, ReadAfterWriteAndWriteAfterRead) {
  const target::Target& t = trn2();
  for (int bufs : {1, 2}) {
    lower::Program p = pipeline(4, 512, bufs);
    SimResult r = run(p);
    auto ld = events(r, 0), act = events(r, 1), st = events(r, 2);
    for (int k = 0; k < 4; ++k) {
      // RAW: DMA -> Scalar costs a semaphore; Scalar -> DMA store a DMA start.
      EXPECT_GE(act[k].start_ns, ld[k].end_ns + t.overheads.semaphore_ns - 1e-9);
      EXPECT_GE(st[k].start_ns, act[k].end_ns + t.dma.start_ns - 1e-9);
    }
    for (int k = bufs; k < 4; ++k) {
      // WAR: the load of version k waits until version k - bufs was read (by the activation).
      EXPECT_GE(ld[k].start_ns, act[k - bufs].end_ns + t.dma.start_ns - 1e-9) << bufs;
      // The activation writing `res` version k waits for the store of version k - bufs.
      EXPECT_GE(act[k].start_ns, st[k - bufs].end_ns + t.overheads.semaphore_ns - 1e-9) << bufs;
    }
    if (bufs == 2) {
      EXPECT_LT(ld[1].start_ns, act[0].end_ns);  // the prefetch runs under the compute
    }
  }
}

// An in-place update (an instruction writing the buffer it reads, lower/materialize/in_place.cpp)
// per row tile: load x, an activation reading x into y (another reader of x, on Scalar), then
// x = x * c on Vector over x itself, and both stored. The in-place write waits for x's load (RAW)
// and for the activation's read of x (WAR on the other reader), and it starts no new version:
// x takes one copy per row tile, so with 2 copies the load of tile k waits for the store of
// tile k - 2 only, and the loads run under the work.
TEST(Ordering, InPlaceUpdateWaitsForTheOtherReaders) {
  const target::Target& t = trn2();
  double latency[2] = {};
  for (int bufs : {1, 2}) {
    ProgramBuilder b(t);
    const std::int64_t trips = 6, cols = 512;
    int x = b.hbm("x", ir::DType::F32, {128 * trips, cols});
    int out_x = b.hbm("out_x", ir::DType::F32, {128 * trips, cols});
    int out_y = b.hbm("out_y", ir::DType::F32, {128 * trips, cols});
    int xt = b.sbuf("xt", ir::DType::F32, {128, cols}, bufs);
    int yt = b.sbuf("yt", ir::DType::F32, {128, cols}, bufs);
    int bias = b.sbuf("bias", ir::DType::F32, {128, 1});
    int c = b.sbuf("c", ir::DType::F32, {128, cols});
    int i = b.loop(0, trips);
    int ld = b.load(i, xt, x, i);
    int act = b.op(i, "activation", Engine::Scalar, {xt, bias}, yt);
    int mul = b.op(i, "tensor_tensor", Engine::Vector, {xt, c}, xt);
    int st_x = b.store(i, xt, out_x, i);
    int st_y = b.store(i, yt, out_y, i);
    SimResult r = run(b.p);
    auto l = events(r, ld), a = events(r, act), m = events(r, mul), sx = events(r, st_x),
         sy = events(r, st_y);
    ASSERT_EQ(m.size(), static_cast<std::size_t>(trips));
    for (std::int64_t k = 0; k < trips; ++k) {
      EXPECT_GE(m[k].start_ns, l[k].end_ns + t.overheads.semaphore_ns - 1e-9) << bufs;  // RAW
      EXPECT_GE(m[k].start_ns, a[k].end_ns + t.overheads.semaphore_ns - 1e-9) << bufs;  // WAR
      EXPECT_GE(sx[k].start_ns, m[k].end_ns + t.dma.start_ns - 1e-9) << bufs;  // reads x * c
      (void)sy;
    }
    for (std::int64_t k = bufs; k < trips; ++k)  // WAR: one version of x per row tile
      EXPECT_GE(l[k].start_ns, sx[k - bufs].end_ns + t.dma.start_ns - 1e-9) << bufs;
    latency[bufs - 1] = r.latency_ns;
  }
  EXPECT_LT(latency[1], 0.9 * latency[0]);  // with 2 copies the loads run under the work
}

TEST(Psum, AccumulationGroupIsOneVersion) {
  const target::Target& t = trn2();
  ProgramBuilder b(t);
  int st = b.sbuf("stationary", ir::DType::BF16, {128, 128});
  int mv = b.sbuf("moving", ir::DType::BF16, {128, 512});
  int acc = b.psum("acc", {128, 512});
  int res = b.sbuf("res", ir::DType::F32, {128, 512});
  int m = b.loop(0, 2, "m");
  int k = b.loop(m, 4, "k");
  int mm = b.op(k, "nc_matmul", Engine::Tensor, {st, mv}, acc, {}, k);
  int cp = b.op(m, "tensor_copy", Engine::Vector, {acc}, res);
  SimResult r = run(b.p);
  auto mms = events(r, mm), cps = events(r, cp);
  ASSERT_EQ(mms.size(), 8u);
  double step = 512 / 2.4, ready = 60 / 2.4;
  // The four matmuls of a group issue back to back (accumulation is not a new version).
  for (int i = 1; i < 4; ++i) EXPECT_NEAR(mms[i].start_ns - mms[i - 1].start_ns, step, 1e-6);
  // The copy reads the group's final value: after the last matmul, its access init and a semaphore.
  EXPECT_NEAR(cps[0].start_ns, mms[3].end_ns + ready + t.overheads.semaphore_ns, 1e-6);
  // One PSUM bank: the next group's first matmul waits for the copy to read it (WAR).
  EXPECT_NEAR(mms[4].start_ns, cps[0].end_ns + t.overheads.semaphore_ns, 1e-6);
  // The copy reads PSUM: formula + DVE fixed + the PSUM read.
  EXPECT_NEAR(cps[0].end_ns - cps[0].start_ns, (512 + 144 + 64) / 0.96, 1e-6);
}

TEST(MultiCore, SplitsTheOuterLoop) {
  SimResult one = run(pipeline(64, 2048, 3, 1), true);
  SimResult two = run(pipeline(64, 2048, 3, 2), true);
  EXPECT_NEAR(two.latency_ns / one.latency_ns, 0.5, 0.03);
  EXPECT_DOUBLE_EQ(two.hbm_read_bytes, one.hbm_read_bytes / 2);
  // trn2's two cores of an HBM stack (the LNC=2 pair) share it: 2.9 TB/s / 4 stacks / 2 cores =
  // 362.5 GB/s each, below the 368 GB/s of a core's DMA engines; eight cores on four stacks
  // get as much each, as does an even split of the chip's HBM over 8 cores (SimOptions).
  SimResult shared = simulate(pipeline(64, 2048, 3, 2), trn2(), SimOptions{true, 8, false});
  EXPECT_DOUBLE_EQ(shared.latency_ns, two.latency_ns);
  SimResult alone = simulate(pipeline(64, 2048, 3, 2), trn2(), SimOptions{true, 1, false});
  EXPECT_GT(two.latency_ns, alone.latency_ns);
  EXPECT_LT(two.latency_ns, alone.latency_ns * 1.03);
  // An odd split: the slowest core runs ceil(65 / 2) = 33 iterations.
  SimResult odd = run(pipeline(65, 2048, 3, 2), true);
  EXPECT_DOUBLE_EQ(odd.hbm_read_bytes, 33.0 * 128 * 2048 * 4);
}

}  // namespace
}  // namespace ts::sim

#include "tilesweep/sim/roofline.h"

#include <gtest/gtest.h>

#include "test_programs.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/sim/simulate.h"

namespace ts::sim {
namespace {

ir::Kernel kernel(const std::string& file) {
  ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/axon/" + file,
                                 sem::OpTable::builtin());
  return m.kernels.front();
}

struct RooflineCase {
  const char* file;
  sem::DimEnv dims;
  double traffic, matmul_flops, other_flops;
};

TEST(Roofline, HandComputedTerms) {
  const Target& t = builtin_target("trn2");
  const RooflineCase cases[] = {
      // x[M, K] @ w[K, N], f32: traffic (MK + KN + MN) x 4, flops 2 MNK.
      {"matmul.py",
       {{"M", 1024}, {"K", 512}, {"N", 2048}},
       (1024.0 * 512 + 512 * 2048 + 1024 * 2048) * 4,
       2.0 * 1024 * 2048 * 512,
       0},
      // relu(x), f32: traffic 2 MN x 4, one op per element.
      {"relu.py", {{"M", 8192}, {"N", 4096}}, 2.0 * 8192 * 4096 * 4, 0, 8192.0 * 4096},
      // softmax: max and sum reduce N per row (M x N each), sub, exp, div element-wise (3 M N).
      {"softmax.py", {{"M", 256}, {"N", 1000}}, 2.0 * 256 * 1000 * 4, 0, 5.0 * 256 * 1000},
  };
  for (const auto& c : cases) {
    Roofline r = roofline(kernel(c.file), c.dims, t);
    EXPECT_DOUBLE_EQ(r.traffic_bytes, c.traffic) << c.file;
    EXPECT_DOUBLE_EQ(r.matmul_flops, c.matmul_flops) << c.file;
    EXPECT_DOUBLE_EQ(r.other_flops, c.other_flops) << c.file;
    EXPECT_NEAR(r.memory_ns, c.traffic / 362.5e9 * 1e9, 1e-9 * r.memory_ns) << c.file;
    EXPECT_NEAR(r.matmul_ns, c.matmul_flops / 22.625e12 * 1e9, 1e-9 * r.matmul_ns + 1e-12)
        << c.file;
    EXPECT_NEAR(r.other_ns, c.other_flops / 245.76e9 * 1e9, 1e-9 * r.other_ns + 1e-12) << c.file;
    EXPECT_DOUBLE_EQ(r.bound_ns, std::max({r.memory_ns, r.matmul_ns, r.other_ns})) << c.file;
  }
}

TEST(Roofline, HelpersAreFractionsOfTheLatency) {
  Roofline r = roofline(kernel("matmul.py"), {{"M", 1024}, {"K", 1024}, {"N", 1024}},
                        builtin_target("trn2"));
  EXPECT_DOUBLE_EQ(r.bound_ns, r.matmul_ns);
  EXPECT_DOUBLE_EQ(r.hfu(2 * r.matmul_ns), 0.5);
  EXPECT_DOUBLE_EQ(r.peak_fraction(r.bound_ns), 1.0);
  EXPECT_DOUBLE_EQ(r.traffic_efficiency(r.memory_ns * 4), 0.25);
  EXPECT_THROW(roofline(kernel("matmul.py"), {{"M", 8}}, builtin_target("trn2")), UserError);
}

TEST(Roofline, SimulatedLatencyNeverBeatsIt) {
  const Target& t = builtin_target("trn2");
  // A large element-wise kernel runs within 10% of the HBM roofline (and not below it).
  Roofline relu = roofline(kernel("relu.py"), {{"M", 128 * 64}, {"N", 4096}}, t);
  SimResult r = simulate(test::elementwise(t, 64, 128, 4096, 3), t);
  EXPECT_GE(r.latency_ns, relu.bound_ns);
  EXPECT_LE(r.latency_ns, 1.1 * relu.bound_ns);
  // Matmuls, fp32 and bf16 (the kernel file is f32; the bf16 bound uses the bf16 peak).
  Roofline mm = roofline(kernel("matmul.py"), {{"M", 512}, {"K", 1024}, {"N", 1024}}, t);
  SimResult f32 = simulate(test::matmul(t, 512, 1024, 1024, ir::DType::F32, 4), t);
  EXPECT_GE(f32.latency_ns, mm.bound_ns);
  EXPECT_LE(f32.latency_ns, 2 * mm.bound_ns);
  SimResult bf16 = simulate(test::matmul(t, 512, 1024, 1024, ir::DType::BF16, 4), t);
  double bf16_bound = std::max(mm.traffic_bytes / 2 / 362.5e9 * 1e9, mm.matmul_flops / 79e12 * 1e9);
  EXPECT_GE(bf16.latency_ns, bf16_bound);
}

}  // namespace
}  // namespace ts::sim

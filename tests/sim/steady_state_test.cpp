// Steady-state extrapolation against full simulation.
#include <gtest/gtest.h>

#include "test_programs.h"
#include "tilesweep/sim/simulate.h"

namespace ts::sim {
namespace {

struct Case {
  std::string name;
  lower::Program p;
  bool skips;  // long enough that extrapolation must skip iterations
};

std::vector<Case> cases(const target::Target& t) {
  using test::elementwise, test::matmul, test::rownorm;
  std::vector<Case> c;
  for (int bufs : {1, 2, 3}) {
    c.push_back({fmt::format("elementwise 5 trips bufs {}", bufs),
                 elementwise(t, 5, 128, 1024, bufs), false});
    c.push_back({fmt::format("elementwise 300 trips bufs {}", bufs),
                 elementwise(t, 300, 128, 2048, bufs), true});
    c.push_back(
        {fmt::format("rownorm 8 partitions bufs {}", bufs), rownorm(t, 200, 8, 1024, bufs), true});
    c.push_back(
        {fmt::format("rownorm 40 partitions bufs {}", bufs), rownorm(t, 150, 40, 512, bufs), true});
  }
  c.push_back({"matmul bf16 small", matmul(t, 256, 512, 256, ir::DType::BF16, 2), false});
  c.push_back({"matmul bf16 medium", matmul(t, 2048, 2048, 1024, ir::DType::BF16, 2), true});
  c.push_back({"matmul fp32 medium",
               matmul(t, 2048, 512, 2048, ir::DType::F32, 3, sem::Engine::Scalar), true});
  c.push_back(
      {"matmul bf16 single-buffered", matmul(t, 2048, 512, 1024, ir::DType::BF16, 1), true});
  return c;
}

TEST(SteadyState, ExtrapolationWithinOnePercentOfFullSimulation) {
  for (const char* target : {"trn1", "trn2", "trn3"}) {
    const target::Target& t = target::builtin_target(target);
    for (const auto& c : cases(t)) {
      SimResult full = simulate(c.p, t, SimOptions{false, 0, false});
      SimResult fast = simulate(c.p, t, SimOptions{true, 0, false});
      ASSERT_TRUE(full.feasible) << c.name << ": " << full.reason;
      EXPECT_NEAR(fast.latency_ns, full.latency_ns, 0.01 * full.latency_ns)
          << target << " " << c.name;
      for (int e = 0; e < 5; ++e)
        EXPECT_NEAR(fast.busy_ns[e], full.busy_ns[e], 1e-6 * full.busy_ns[e] + 1e-6)
            << target << " " << c.name;
      EXPECT_NEAR(fast.hbm_read_bytes, full.hbm_read_bytes, 1e-9 * full.hbm_read_bytes) << c.name;
      EXPECT_NEAR(fast.hbm_write_bytes, full.hbm_write_bytes, 1e-9 * full.hbm_write_bytes)
          << c.name;
      EXPECT_NEAR(fast.instructions, full.instructions, 1e-9 * full.instructions) << c.name;
      EXPECT_EQ(full.simulated, static_cast<std::int64_t>(full.instructions)) << c.name;
      if (c.skips) {
        EXPECT_LT(fast.simulated * 3, full.simulated) << target << " " << c.name;
      }
    }
  }
}

TEST(SteadyState, ExactForAPeriodicLoop) {
  // Independent back-to-back matmuls are periodic from the start: extrapolation is exact.
  const target::Target& t = target::builtin_target("trn2");
  test::ProgramBuilder b(t);
  int st = b.sbuf("stationary", ir::DType::BF16, {128, 128});
  int mv = b.sbuf("moving", ir::DType::BF16, {128, 512});
  int acc = b.psum("acc", {128, 512});
  int k = b.loop(0, 100000);
  b.op(k, "nc_matmul", sem::Engine::Tensor, {st, mv}, acc, {}, k);
  SimResult r = simulate(b.p, t);
  EXPECT_NEAR(r.latency_ns, 100000 * 512 / 2.4, 1e-6 * r.latency_ns);
  EXPECT_LT(r.simulated, 10);
}

}  // namespace
}  // namespace ts::sim

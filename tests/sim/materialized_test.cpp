// The simulator on candidates the materializer builds from Axon kernels: extrapolation agrees
// with full simulation, and no candidate beats the attainable bound.
#include <gtest/gtest.h>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/lower/fusion.h"
#include "tilesweep/sim/roofline.h"
#include "tilesweep/sim/simulate.h"

namespace ts::sim {
namespace {

struct KernelCase {
  const char* file;
  sem::DimEnv dims;
};

TEST(Materialized, ExtrapolationAgreesAndRooflineHolds) {
  const target::Target& t = target::builtin_target("trn2");
  const KernelCase cases[] = {
      {"matmul.py", {{"M", 1024}, {"K", 1024}, {"N", 2048}}},
      {"rmsnorm.py", {{"M", 4096}, {"N", 2048}}},
      {"softmax.py", {{"M", 2048}, {"N", 1024}}},
      {"silu.py", {{"M", 8192}, {"N", 1024}}},
  };
  for (const auto& c : cases) {
    ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/axon/" + c.file,
                                   sem::OpTable::builtin());
    const ir::Kernel& k = m.kernels.front();
    lower::SynthesisCache cache;
    lower::KernelChoices choices = lower::instruction_choices(k, t.isa, cache);
    lower::CandidateSpace space({{&k, &choices}}, t, c.dims);
    int simulated = 0;
    for (std::int64_t i = 0; i < space.size() && simulated < 24;
         i += std::max<std::int64_t>(1, space.size() / 24)) {
      lower::Lowered<lower::Program> lowered = space.materialize(i);
      if (!lowered) continue;
      const lower::Program& p = *lowered;
      SimResult full = simulate(p, t, SimOptions{false, 0, false});
      SimResult fast = simulate(p, t);
      if (!full.feasible) continue;
      ++simulated;
      EXPECT_NEAR(fast.latency_ns, full.latency_ns, 0.01 * full.latency_ns)
          << c.file << " candidate " << i;
      EXPECT_NEAR(fast.instructions, full.instructions, 1e-9 * full.instructions)
          << c.file << " candidate " << i;
      EXPECT_GE(full.latency_ns, roofline(k, c.dims, t, p.cores).attainable_ns)
          << c.file << " candidate " << i;
    }
    EXPECT_GT(simulated, 0) << c.file;
  }
}

}  // namespace
}  // namespace ts::sim

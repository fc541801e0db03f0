// The timeline-free latency bound (sim/lower_bound.h) never exceeds the simulated latency, over
// many candidates of several Axon kernels on every target (one and two cores), and
// SimOptions::stop_after_ns stops exactly the candidates slower than it.
#include "tilesweep/sim/lower_bound.h"

#include <gtest/gtest.h>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/sim/simulate.h"

namespace ts::sim {
namespace {

struct BoundCase {
  const char* file;
  const char* target;
  sem::DimEnv dims;
  int cores;
};

TEST(LowerBound, NeverAboveTheSimulatedLatency) {
  const BoundCase cases[] = {
      {"matmul.py", "trn1", {{"M", 1024}, {"K", 1024}, {"N", 1024}}, 1},
      {"matmul.py", "trn2", {{"M", 512}, {"K", 2048}, {"N", 1024}}, 2},
      {"rmsnorm.py", "trn1", {{"M", 2048}, {"N", 2048}}, 1},

      {"softmax.py", "trn2", {{"M", 2048}, {"N", 1024}}, 1},
      {"cumsum.py", "trn1", {{"M", 1024}, {"N", 1024}}, 1},

      {"swiglu.py", "trn1", {{"M", 1024}, {"N", 1024}}, 2},
      {"rmsnorm_matmul.py", "trn2", {{"M", 2048}, {"K", 2048}, {"N", 2048}}, 1},
      {"silu.py", "trn3", {{"M", 4096}, {"N", 1024}}, 1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.file) + " on " + c.target);
    const target::Target& t = target::builtin_target(c.target);
    ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/axon/" + c.file,
                                   sem::OpTable::builtin());
    const ir::Kernel& k = m.kernels.front();
    lower::SynthesisCache cache;
    lower::KernelChoices choices = lower::instruction_choices(k, t.isa, cache);
    lower::SpaceOptions so;
    so.cores = c.cores;
    so.max_block = 4;
    lower::CandidateSpace space({{&k, &choices}}, t, c.dims, so);
    int checked = 0, tight = 0;
    const std::int64_t step = std::max<std::int64_t>(1, space.size() / 20);
    for (std::int64_t i = 0; i < space.size(); i += step) {
      lower::Lowered<lower::Program> lowered = space.materialize(i);
      if (!lowered) continue;
      const lower::Program& p = *lowered;
      SimResult r = simulate(p, t);
      if (!r.feasible) continue;
      ++checked;
      LatencyBound b = latency_lower_bound(p, t);
      EXPECT_LE(b.ns * (1 - 1e-9), r.latency_ns) << "candidate " << i;
      EXPECT_GT(b.ns, 0) << "candidate " << i;
      // Per compute engine, the work the simulation ran (extrapolated loops included).
      for (int e = 0; e < 4; ++e)
        EXPECT_LE(b.engine[e] * (1 - 1e-9), r.busy_ns[e]) << "candidate " << i << " engine " << e;
      if (b.ns >= 0.5 * r.latency_ns) ++tight;
      // Stopped below its latency: stopped, with a lower bound of it; at its latency: the same
      // run.
      for (double f : {0.3, 0.9, 0.999}) {
        SimOptions below;
        below.stop_after_ns = r.latency_ns * f;
        SimResult s = simulate(p, t, below);
        EXPECT_TRUE(s.stopped) << "candidate " << i << " at " << f;
        EXPECT_FALSE(s.feasible) << "candidate " << i;
        EXPECT_LE(s.latency_ns, r.latency_ns) << "candidate " << i << " at " << f;
        EXPECT_GT(s.latency_ns, below.stop_after_ns) << "candidate " << i << " at " << f;
      }
      SimOptions at;
      at.stop_after_ns = r.latency_ns;
      SimResult same = simulate(p, t, at);
      EXPECT_FALSE(same.stopped) << "candidate " << i;
      EXPECT_EQ(same.latency_ns, r.latency_ns) << "candidate " << i;
    }
    EXPECT_GE(checked, 5);
    // The bound is meant to prune: it is within 2x of the latency for some candidates.
    EXPECT_GT(tight, 0);
  }
}

}  // namespace
}  // namespace ts::sim

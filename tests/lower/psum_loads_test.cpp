// Loads in PSUM (psum_values.cpp, GroupTiling::psum_loads): where a Vector instruction that runs
// faster with one input in PSUM reads two loaded tiles, one is copied into PSUM by the Scalar
// engine right after its load. Where the twin is offered (NeuronCore-v3 on, fp32 tiles) and
// where not; its candidates on numbers against the reference, each copy right after its load,
// no instruction reading two inputs from PSUM.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "reference_check.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/sim/execute.h"
#include "tilesweep/sweep/check.h"

namespace ts::lower {
namespace {

struct LoadsCase {
  std::string name;
  std::string source;  // a kernel's text, or an NKIBench kernel's name
  std::string target;
  sem::DimEnv dims;
  bool offered;  // some candidate copies a load into PSUM
};

void PrintTo(const LoadsCase& c, std::ostream* os) { *os << c.name << " " << c.target; }

class PsumLoads : public ::testing::TestWithParam<LoadsCase> {};

// The block and position of instruction `id`.
std::pair<int, std::size_t> position(const Program& p, int id) {
  for (std::size_t b = 0; b < p.blocks.size(); ++b)
    for (std::size_t j = 0; j < p.blocks[b].items.size(); ++j)
      if (p.blocks[b].items[j].inst == id) return {static_cast<int>(b), j};
  return {-1, 0};
}

TEST_P(PsumLoads, MatchTheReference) {
  const LoadsCase& c = GetParam();
  ir::Module m = c.source.find("def ") == std::string::npos
                     ? ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/nkibench/" +
                                           c.source + ".py",
                                       sem::OpTable::builtin())
                     : ir::parse_module(c.source, "t.py", sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  const target::Target& t = target::builtin_target(c.target);
  test::Prepared p(k, t, 2);
  SpaceOptions so;
  so.max_block = 2;
  CandidateSpace space(p.pk.space_variants(), t, c.dims, so);
  ASSERT_GT(space.size(), 0);
  auto inputs = sweep::check_inputs(k, c.dims, 5);
  auto ref = ir::evaluate(k, c.dims, inputs, ir::Precision::F64);
  int offered = 0, checked = 0, copies = 0;
  for (std::int64_t i = 0; i < space.size() && checked < 12; ++i) {
    const std::string what = space.describe(i);
    if (what.find(" psum-loads") == std::string::npos) continue;
    ++offered;
    if (offered % 3 != 1) continue;  // a spread of them
    Lowered<Program> program = space.materialize(i);
    if (!program) continue;
    ASSERT_TRUE(test::matches(sim::execute(*program, inputs), ref)) << what;
    ++checked;
    for (std::size_t id = 0; id < program->insts.size(); ++id) {
      const Inst& in = program->insts[id];
      int psum_inputs = 0;
      for (int b : in.in)
        psum_inputs += program->buffers[static_cast<std::size_t>(b)].memory == sem::Memory::Psum;
      EXPECT_LT(psum_inputs, 2) << in.spec->op.name << ": " << what;
      if (in.dma || in.in.size() != 1 || in.out < 0 ||
          program->buffers[static_cast<std::size_t>(in.out)].memory != sem::Memory::Psum ||
          in.engine != sem::Engine::Scalar)
        continue;
      // A copy of a load: the load's next item in the same block.
      auto load = std::find_if(program->insts.begin(), program->insts.end(), [&](const Inst& w) {
        return w.dma && !w.store && w.out == in.in[0];
      });
      if (load == program->insts.end()) continue;
      auto [block, at] = position(*program, static_cast<int>(load - program->insts.begin()));
      ASSERT_GE(block, 0);
      ++copies;
      EXPECT_EQ(position(*program, static_cast<int>(id)), std::make_pair(block, at + 1)) << what;
    }
  }
  EXPECT_EQ(offered > 0, c.offered) << offered << " psum-loads candidates";
  if (c.offered) EXPECT_GT(copies, 0) << checked << " candidates checked";
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, PsumLoads,
    ::testing::Values(LoadsCase{"rope", "rope", "trn2", {{"D", 128}, {"L", 1024}}, true},
                      // tensor_copy does not run on the Scalar engine of NeuronCore-v2.
                      LoadsCase{"rope", "rope", "trn1", {{"D", 128}, {"L", 1024}}, false},
                      LoadsCase{"product",
                                "def f(x: f32[M, N], y: f32[M, N]) -> f32[M, N]:\n"
                                "    return x * y\n",
                                "trn2",
                                {{"M", 256}, {"N", 1024}},
                                true},
                      // A bf16 tile is not moved (the fast case is written for fp32 operands only).
                      LoadsCase{"bf16_product",
                                "def f(x: bf16[M, N], y: bf16[M, N]) -> bf16[M, N]:\n"
                                "    return x * y\n",
                                "trn2",
                                {{"M", 256}, {"N", 1024}},
                                false}),
    [](const auto& info) { return info.param.name + "_" + info.param.target; });

}  // namespace
}  // namespace ts::lower

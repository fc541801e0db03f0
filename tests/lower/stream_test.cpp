// Split reductions along free tiles (split_reduction.h, stream_nest.cpp): the fold each streamed
// reduction relies on is proved by Z3 (and refused where it is false: mean), streamed candidates
// compute the reference on numbers, and rows too long for SBUF still have programs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "reference_check.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/interpreter.h"
#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/lower/split_reduction.h"
#include "tilesweep/sim/execute.h"
#include "tilesweep/sweep/check.h"
#include "tilesweep/sweep/prepare.h"

namespace ts {
namespace {

ir::Module parse(const std::string& src) {
  return ir::parse_module(src, "t.py", sem::OpTable::builtin());
}

ir::Module suite(const std::string& file) {
  return ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/" + file,
                         sem::OpTable::builtin());
}

TEST(SplitReduction, FoldsOfSumMaxMinAreProvedAndMeanIsRefused) {
  ir::Module m = parse(
      "def f(x: f32[M, N]) -> f32[M, 1]:\n"
      "    a = sum(x, axis=1, keepdims=True) + max(x, axis=1, keepdims=True)\n"
      "    return a + min(x, axis=1, keepdims=True) + mean(x, axis=1, keepdims=True)\n");
  const ir::Kernel& k = m.kernels.front();
  std::vector<lower::SplitReduction> splits = lower::split_reductions(k);
  ASSERT_EQ(splits.size(), 4u);
  std::map<std::string, const lower::SplitReduction*> by_op;
  for (const auto& s : splits) by_op[k.nodes[s.node].op] = &s;
  EXPECT_TRUE(by_op.at("sum")->proved);
  EXPECT_EQ(by_op.at("sum")->identity, 0);
  EXPECT_TRUE(by_op.at("max")->proved);
  EXPECT_LT(by_op.at("max")->identity, -1e38);
  EXPECT_TRUE(by_op.at("min")->proved);
  EXPECT_GT(by_op.at("min")->identity, 1e38);
  // The mean of two means is not the mean of A + B columns: a counterexample, not a guess.
  EXPECT_FALSE(by_op.at("mean")->proved);
  EXPECT_EQ(by_op.at("mean")->proof.kind, verify::VerdictKind::NotEquivalent);
  EXPECT_NE(by_op.at("mean")->why.find("not proved"), std::string::npos);
}

TEST(SplitReduction, ReductionsAcrossPartitionsAndScansAreNotSplit) {
  ir::Module m = parse(
      "def f(x: f32[M, N]) -> f32[M, N]:\n"
      "    return cumsum(x, axis=1) + sum(x, axis=0, keepdims=True)\n");
  EXPECT_TRUE(lower::split_reductions(m.kernels.front()).empty());
}

using test::Prepared;

// True when candidate `c` streams a reduction (a free tile in a group that reduces a row).
bool streams(const lower::CandidateSpace& space, const ir::Kernel& k, const lower::Candidate& c) {
  lower::ProgramPlan plan = space.plan(c);
  for (std::size_t g = 0; g < plan.groups.size(); ++g)
    if (lower::streamed(k, plan.groups[g], plan.tiling[g])) return true;
  return false;
}

struct StreamCase {
  std::string name, file, source;
  sem::DimEnv dims;
};

void PrintTo(const StreamCase& c, std::ostream* os) { *os << c.name; }

class Streamed : public ::testing::TestWithParam<StreamCase> {};

// A seeded sample of the streamed candidates of every variant, run by the functional ISA
// interpreter against the reference (|out - ref| <= 1e-4 + 1e-4 |ref|).
TEST_P(Streamed, CandidatesMatchTheReference) {
  const StreamCase& sc = GetParam();
  ir::Module m = sc.file.empty() ? parse(sc.source) : suite(sc.file);
  const ir::Kernel& k = m.kernels.front();
  const target::Target& t = target::builtin_target("trn2");
  Prepared p(k, t, 2);
  lower::CandidateSpace space(p.pk.space_variants(), t, sc.dims);
  auto inputs = sweep::check_inputs(k, sc.dims, 7);
  auto ref = ir::evaluate(k, sc.dims, inputs, ir::Precision::F64);
  std::mt19937_64 rng(5);
  int checked = 0;
  for (int tries = 0; tries < 4000 && checked < 6; ++tries) {
    auto i = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(space.size()));
    lower::Candidate c = space.decode(i);
    if (!streams(space, *p.pk.space_variants()[c.variant].kernel, c)) continue;
    lower::Lowered<lower::Program> program = space.materialize(c);
    ASSERT_TRUE(program) << space.describe(i) << ": " << program.no_program().reason;
    auto out = sim::execute(*program, inputs);
    ASSERT_TRUE(test::matches(out, ref)) << space.describe(i);
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no streamed candidate of " << sc.name;
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, Streamed,
    ::testing::Values(StreamCase{"softmax", "axon/softmax.py", "", {{"M", 128}, {"N", 1024}}},
                      StreamCase{"logsumexp",
                                 "",
                                 "def lse(x: f32[M, N]) -> f32[M, 1]:\n"
                                 "    m = max(x, axis=1, keepdims=True)\n"
                                 "    return m + log(sum(exp(x - m), axis=1, keepdims=True))\n",
                                 {{"M", 128}, {"N", 1024}}},
                      StreamCase{
                          "min_and_energy",
                          "",
                          "def f(x: f32[M, N], y: f32[M, N]) -> f32[M, N]:\n"
                          "    return (x - min(x, axis=1, keepdims=True)) * y / sum(y * y, axis=1, "
                          "keepdims=True)\n",
                          {{"M", 128}, {"N", 1024}}},
                      StreamCase{"bmm_softmax",
                                 "nkibench/bmm_softmax.py",
                                 "",
                                 {{"B", 2}, {"M", 128}, {"K", 64}, {"N", 1024}}}),
    [](const auto& info) { return info.param.name; });

// A row longer than SBUF holds (128 x 65536 f32 is 256 KiB per partition, SBUF 192 KiB): no
// whole-row program fits, the streamed ones and the two-pass online ones do.
TEST(Streamed, RowsLongerThanSbufHavePrograms) {
  ir::Module m = suite("axon/softmax.py");
  const ir::Kernel& k = m.kernels.front();
  const target::Target& t = target::builtin_target("trn2");
  Prepared p(k, t, 1);
  lower::CandidateSpace space(p.pk.space_variants(), t, {{"M", 128}, {"N", 65536}});
  ASSERT_GT(space.size(), 0);
  for (std::int64_t i = 0; i < space.size(); i += std::max<std::int64_t>(1, space.size() / 50)) {
    lower::Candidate c = space.decode(i);
    if (!c.fused) continue;
    lower::ProgramPlan plan = space.plan(c);
    bool online = std::any_of(plan.tiling.begin(), plan.tiling.end(),
                              [](const lower::GroupTiling& g) { return g.online > 0; });
    EXPECT_TRUE(streams(space, k, c) || online) << space.describe(i);
  }
}

}  // namespace
}  // namespace ts

// Cross-core reductions (core_reduction.h): a program whose one top-level loop carries a
// reduction (a split-K matmul's PSUM accumulation, a streamed row sum or max) runs on 2 and 4
// NeuronCores, each core's share on numbers against the reference; the split is the best
// candidate when it is faster; and what is not a reduction (a scan's carry, a loop whose
// iterations do not divide over the cores) is still refused.
#include "tilesweep/lower/core_reduction.h"

#include <gtest/gtest.h>

#include <limits>

#include "reference_check.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/interpreter.h"
#include "tilesweep/lower/candidate_cursor.h"
#include "tilesweep/lower/core_split.h"
#include "tilesweep/sim/execute.h"
#include "tilesweep/sim/roofline.h"
#include "tilesweep/sim/simulate.h"
#include "tilesweep/sweep/check.h"
#include "tilesweep/sweep/prepare.h"

namespace ts {
namespace {

struct Case {
  const char* name;
  const char* source;   // one kernel
  sem::DimEnv dims;     // where the split is faster
  sem::DimEnv numbers;  // smaller: run on numbers
  const char* target;
  int cores;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name << " " << c.cores; }

constexpr const char* kMatmul =
    "def matmul(x: f32[M, K], w: f32[K, N]) -> f32[M, N]:\n"
    "    return x @ w\n";
constexpr const char* kRowSum =
    "def rowsum(x: f32[M, N]) -> f32[M, 1]:\n"
    "    return sum(x, axis=1, keepdims=True)\n";
constexpr const char* kRowMax =
    "def rowmax(x: f32[M, N]) -> f32[M, 1]:\n"
    "    return max(x, axis=1, keepdims=True)\n";

struct Space {
  ir::Module module;
  lower::SynthesisCache cache;
  sweep::PreparedKernel pk;
  std::unique_ptr<lower::CandidateSpace> space;
  const ir::Kernel& kernel() const { return module.kernels[0]; }
};

std::unique_ptr<Space> space_of(const Case& c, int cores, const sem::DimEnv& dims) {
  auto s = std::make_unique<Space>();
  s->module = ir::parse_module(c.source, std::string(c.name) + ".py", sem::OpTable::builtin());
  sweep::PrepareOptions o;
  o.propagate.max_variants = 1;
  const target::Target& t = target::builtin_target(c.target);
  s->pk = sweep::prepare_kernel(s->module.kernels[0], t.isa, s->cache, o);
  lower::SpaceOptions so;
  so.max_block = 1;
  so.cores = cores;
  s->space = std::make_unique<lower::CandidateSpace>(s->pk.space_variants(), t, dims, so);
  return s;
}

// A program with a cross-core reduction: its core loop (block 1) and the combine after it.
bool reduces(const lower::Program& p) {
  return p.blocks.size() > 1 && p.blocks[1].var == "core" && p.blocks[1].parent == 0;
}

class CrossCoreReductions : public ::testing::TestWithParam<Case> {};

// The first candidates at the case's cores that reduce across them (through the cursor, which
// rebinds engines, depths and cores on one program, and through materialize), on numbers.
TEST_P(CrossCoreReductions, EveryCoresShareMatchesTheReference) {
  const Case& c = GetParam();
  auto s = space_of(c, c.cores, c.numbers);
  auto inputs = sweep::check_inputs(s->kernel(), c.numbers, 7);
  auto ref = ir::evaluate(s->kernel(), c.numbers, inputs, ir::Precision::F64);
  lower::CandidateCursor cursor(*s->space);
  int checked = 0;
  for (std::int64_t i = 0; i < s->space->size() && checked < 2; ++i) {
    if (s->space->decode(i).cores != c.cores) continue;
    const auto& p = cursor.at(i);
    if (!p || !reduces(*p)) continue;
    ASSERT_EQ(p->cores, c.cores);
    ASSERT_EQ(p->blocks[1].trips, c.cores);
    ASSERT_TRUE(test::matches(sim::execute(*p, inputs), ref)) << s->space->describe(i);
    // Sequentially (one core running the core loop in order: the NKI emitter's reading) too.
    lower::Program one = *p;
    one.cores = 1;
    ASSERT_TRUE(test::matches(sim::execute(one, inputs), ref))
        << s->space->describe(i) << ", on one core";
    // materialize builds the same program as the cursor.
    auto built = s->space->materialize(i);
    ASSERT_TRUE(built) << built.no_program().reason;
    EXPECT_EQ(built->insts.size(), p->insts.size());
    EXPECT_EQ(built->blocks.size(), p->blocks.size());
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no candidate reduces across the cores";
}

// The best candidate with up to `cores` cores splits the reduction (it is faster than one core:
// each core reads 1 / cores of the operands), and is never below the attainable bound; the
// simulated latency pays the barrier and core 0's combine.
TEST_P(CrossCoreReductions, TheSplitIsChosenWhenFaster) {
  const Case& c = GetParam();
  const target::Target& t = target::builtin_target(c.target);
  auto s = space_of(c, c.cores, c.dims);
  lower::CandidateCursor cursor(*s->space);
  double best = std::numeric_limits<double>::infinity(), best_one = best;
  int best_cores = 0;
  std::int64_t best_index = 0;
  for (std::int64_t i = 0; i < s->space->size(); ++i) {
    const auto& p = cursor.at(i);
    if (!p) continue;
    sim::SimResult r = sim::simulate(*p, t);
    if (!r.feasible) continue;
    double bound = sim::roofline(s->kernel(), c.dims, t, p->cores).attainable_ns;
    ASSERT_GE(r.latency_ns, bound * (1 - 1e-9)) << s->space->describe(i);
    if (p->cores == 1) best_one = std::min(best_one, r.latency_ns);
    if (r.latency_ns < best) best = r.latency_ns, best_cores = p->cores, best_index = i;
    if (reduces(*p)) {  // the barrier, at least
      EXPECT_GE(r.latency_ns, t.overheads.core_barrier_ns) << s->space->describe(i);
    }
  }
  EXPECT_EQ(best_cores, c.cores);
  EXPECT_LT(best, best_one);
  EXPECT_TRUE(reduces(cursor.at(best_index).value())) << s->space->describe(best_index);
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, CrossCoreReductions,
    ::testing::Values(
        // Split-K: M and N one tile each, the contraction the only loop.
        Case{"matmul",
             kMatmul,
             {{"M", 128}, {"K", 4096}, {"N", 128}},
             {{"M", 128}, {"K", 1024}, {"N", 128}},
             "trn2",
             2},
        Case{"matmul",
             kMatmul,
             {{"M", 128}, {"K", 4096}, {"N", 128}},
             {{"M", 128}, {"K", 1024}, {"N", 128}},
             "trn2",
             4},
        Case{"matmul",
             kMatmul,
             {{"M", 128}, {"K", 4096}, {"N", 128}},
             {{"M", 128}, {"K", 1024}, {"N", 128}},
             "trn1",
             2},
        // A sum over one row tile's long rows (streamed: the free tiles the only loop).
        Case{"rowsum", kRowSum, {{"M", 128}, {"N", 32768}}, {{"M", 128}, {"N", 8192}}, "trn2", 2},
        Case{"rowsum", kRowSum, {{"M", 128}, {"N", 32768}}, {{"M", 128}, {"N", 8192}}, "trn2", 4},
        Case{"rowmax", kRowMax, {{"M", 128}, {"N", 32768}}, {{"M", 128}, {"N", 8192}}, "trn1", 2}),
    [](const auto& info) {
      return std::string(info.param.name) + "_" + info.param.target + "_" +
             std::to_string(info.param.cores);
    });

// A contraction that does not divide over the cores: refused, with the reason; over 3 cores it
// does.
TEST(CrossCoreReductionRefusals, AnUnevenSplitHasNoProgram) {
  // Three contraction tiles over two cores.
  {
    Case c{"matmul", kMatmul, {{"M", 128}, {"K", 384}, {"N", 128}}, {}, "trn2", 2};
    auto s = space_of(c, 1, c.dims);
    lower::Program p = s->space->materialize(0).value();
    ASSERT_TRUE(lower::core_split_conflict(p));
    ASSERT_FALSE(lower::core_reduced(p).empty());
    auto two = lower::with_core_reduction(p, 2, target::builtin_target("trn2"));
    ASSERT_FALSE(two);
    EXPECT_NE(two.no_program().reason.find("do not divide over 2 cores"), std::string::npos)
        << two.no_program().reason;
    auto three = lower::with_core_reduction(p, 3, target::builtin_target("trn2"));
    ASSERT_TRUE(three) << three.no_program().reason;
    auto inputs = sweep::check_inputs(s->kernel(), c.dims, 7);
    auto ref = ir::evaluate(s->kernel(), c.dims, inputs, ir::Precision::F64);
    EXPECT_TRUE(test::matches(sim::execute(*three, inputs), ref));
  }
}

}  // namespace
}  // namespace ts

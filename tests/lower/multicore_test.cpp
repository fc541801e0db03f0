// Candidates split over several NeuronCores ([search] cores): the functional interpreter runs
// every core's share (own SBUF and PSUM, shared HBM) and must match the reference; the timing
// simulator never beats the attainable bound at the candidate's cores, and more cores never make
// the best candidate slower.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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
  const char* file;  // under jobs/kernels/axon
  sem::DimEnv dims;
  const char* target;
  int cores;  // SpaceOptions::cores
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.file << " " << c.target << " " << c.cores;
}

struct Space {
  ir::Module module;
  lower::SynthesisCache cache;
  sweep::PreparedKernel pk;
  std::unique_ptr<lower::CandidateSpace> space;
};

// The space of `c` with up to `cores` cores (the kernel prepared once per Space).
void respace(Space& s, const Case& c, int cores) {
  lower::SpaceOptions so;
  so.max_block = 2;
  so.cores = cores;
  s.space = std::make_unique<lower::CandidateSpace>(s.pk.space_variants(),
                                                    target::builtin_target(c.target), c.dims, so);
}

std::unique_ptr<Space> space_of(const Case& c, int cores) {
  auto s = std::make_unique<Space>();
  s->module = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/axon/" + c.file,
                              sem::OpTable::builtin());
  sweep::PrepareOptions o;
  o.propagate.max_variants = 1;
  s->pk = sweep::prepare_kernel(s->module.kernels[0], target::builtin_target(c.target).isa,
                                s->cache, o);
  respace(*s, c, cores);
  return s;
}

class MultiCoreCandidates : public ::testing::TestWithParam<Case> {};

TEST_P(MultiCoreCandidates, EveryCoresShareMatchesTheReference) {
  const Case& c = GetParam();
  auto s = space_of(c, c.cores);
  const ir::Kernel& k = s->module.kernels[0];
  auto inputs = sweep::check_inputs(k, c.dims, 7);
  auto ref = ir::evaluate(k, c.dims, inputs, ir::Precision::F64);
  int checked = 0;
  for (std::int64_t i = 0; i < s->space->size() && checked < 12; i += 11) {
    lower::Candidate cand = s->space->decode(i);
    if (cand.cores < 2) continue;
    auto p = s->space->materialize(i);
    if (!p) continue;
    ASSERT_TRUE(test::matches(sim::execute(*p, inputs), ref)) << s->space->describe(i);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST_P(MultiCoreCandidates, NoneBeatsTheAttainableBoundAndMoreCoresNeverSlowTheBest) {
  const Case& c = GetParam();
  const target::Target& t = target::builtin_target(c.target);
  double previous = std::numeric_limits<double>::infinity();
  auto s = space_of(c, 1);
  const ir::Kernel& k = s->module.kernels[0];
  for (int cores = 1; cores <= c.cores; cores *= 2) {
    respace(*s, c, cores);
    lower::CandidateCursor cursor(*s->space);
    double best = std::numeric_limits<double>::infinity();
    for (std::int64_t i = 0; i < s->space->size(); ++i) {
      const auto& p = cursor.at(i);
      if (!p) continue;
      sim::SimResult r = sim::simulate(*p, t);
      if (!r.feasible) continue;
      double bound = sim::roofline(k, c.dims, t, p->cores).attainable_ns;
      ASSERT_GE(r.latency_ns, bound * (1 - 1e-9)) << s->space->describe(i);
      ASSERT_GT(r.latency_ns, 0);
      best = std::min(best, r.latency_ns);
    }
    EXPECT_LE(best, previous) << cores << " cores";
    previous = best;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, MultiCoreCandidates,
    ::testing::Values(Case{"relu.py", {{"M", 1024}, {"N", 64}}, "trn2", 8},
                      Case{"matmul.py", {{"M", 512}, {"K", 128}, {"N", 128}}, "trn2", 8},
                      Case{"softmax.py", {{"M", 512}, {"N", 64}}, "trn1", 2}),
    [](const auto& info) {
      std::string f = info.param.file;
      return f.substr(0, f.find('.')) + "_" + info.param.target + "_" +
             std::to_string(info.param.cores);
    });

// A top-level loop that carries a value from one iteration to the next has no split: the
// interpreter, run on two cores, computes something else, and core_split_conflict says why.
TEST(MultiCoreCandidates, ACarriedValueIsRefused) {
  Case c{"matmul.py", {{"M", 256}, {"K", 512}, {"N", 128}}, "trn2", 1};
  auto s = space_of(c, 1);
  lower::Program p = s->space->materialize(0).value();
  ASSERT_FALSE(lower::core_split_conflict(p));
  // Make the row loop's matmul accumulate over the rows: a reduction across the split loop.
  const int row = p.blocks[0].items.back().block;
  ASSERT_GE(row, 0);
  bool edited = false;
  for (auto& in : p.insts)
    if (in.accumulate_block >= 0) in.accumulate_block = row, edited = true;
  ASSERT_TRUE(edited);
  auto why = lower::core_split_conflict(p);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("accumulates across iterations"), std::string::npos) << *why;
  const ir::Kernel& k = s->module.kernels[0];
  auto inputs = sweep::check_inputs(k, c.dims, 7);
  auto one = sim::execute(p, inputs);
  p.cores = 2;
  auto two = sim::execute(p, inputs);
  EXPECT_NE(one[0].data, two[0].data);
}

}  // namespace
}  // namespace ts

// The cursor gives, at every index, the program CandidateSpace::materialize builds there, while
// building one program per structure: rebinding engines and buffering depths is exact.
#include "tilesweep/lower/candidate_cursor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/core_split.h"
#include "tilesweep/lower/fusion.h"
#include "tilesweep/lower/program_printer.h"
#include "tilesweep/target/target.h"

namespace ts::lower {
namespace {

struct Case {
  const char* kernel;
  sem::DimEnv dims;
  bool per_op;
  std::int64_t walk;  // indices visited in order from 0 (then as many in a jumping order), at most
  int cores = 1;      // SpaceOptions::cores
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.kernel << (c.per_op ? " (engines per op)" : "") << " cores " << c.cores;
}

// Everything the simulator and the printer read, engines and depths spelled out; not the
// notes, which the cursor leaves out.
std::string fingerprint(Program p) {
  for (auto& in : p.insts) in.note.clear();
  std::string s = print_program(p);
  for (const auto& in : p.insts) s += std::string(sem::engine_name(in.engine)) + ",";
  for (const auto& b : p.buffers) s += std::to_string(b.bufs) + ",";
  return s;
}

// "" when there is no program.
std::string fingerprint_or_none(const Lowered<Program>& program) {
  return program ? fingerprint(*program) : "";
}

class CursorCase : public ::testing::TestWithParam<Case> {};

TEST_P(CursorCase, EqualsMaterializeAtEveryIndex) {
  const Case& c = GetParam();
  const target::Target& t = target::builtin_target("trn2");
  const ir::Module m =
      ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/axon/" + c.kernel + ".py",
                      sem::OpTable::builtin());
  const ir::Kernel& k = *std::find_if(m.kernels.begin(), m.kernels.end(),
                                      [&](const auto& x) { return x.name == c.kernel; });
  static SynthesisCache cache;  // shared by the cases: their tile ops overlap
  KernelChoices choices = instruction_choices(k, t.isa, cache);
  SpaceOptions o;
  o.engines_per_op = c.per_op;
  o.cores = c.cores;
  CandidateSpace space({{&k, &choices}}, t, c.dims, o);
  const std::int64_t n = std::min(space.size(), c.walk);
  ASSERT_GT(n, 0);
  std::vector<std::int64_t> order;
  for (std::int64_t i = 0; i < n; ++i) order.push_back(i);
  for (std::int64_t i = 0; i < n; ++i)
    order.push_back((i * 7919 + 13) % space.size());  // jumps: rebuilds
  CandidateCursor cursor(space);
  int programs = 0;
  for (std::int64_t i : order) {
    std::string want = fingerprint_or_none(space.materialize(i));
    std::string got = fingerprint_or_none(cursor.at(i));
    ASSERT_EQ(got, want) << c.kernel << " candidate " << i << ": " << space.describe(i);
    programs += !want.empty();
  }
  EXPECT_GT(programs, 0);
  // The section's prefix (HBM views, lowering programs prepared once) changes nothing: a plan
  // without it derives everything on the spot.
  for (std::int64_t j = n; j < static_cast<std::int64_t>(order.size()); j += 7) {
    ProgramPlan alone = space.plan(space.decode(order[j]));
    alone.prefix = nullptr;
    std::string want = fingerprint_or_none(space.materialize(order[j]));
    Lowered<Program> built = materialize(k, c.dims, t, alone);
    if (built && built->cores > 1 && core_split_conflict(*built)) built = NoProgram{};
    ASSERT_EQ(fingerprint_or_none(built), want) << c.kernel << " candidate " << order[j];
  }
  // In order, a program is built once per engine-policy x depth run at most.
  CandidateCursor walker(space);
  for (std::int64_t i = 0; i < n; ++i) walker.at(i);
  EXPECT_LE(walker.built() * 3, n) << "built " << walker.built() << " of " << n;
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, CursorCase,
    ::testing::Values(Case{"rmsnorm_matmul", {{"M", 256}, {"K", 256}, {"N", 256}}, false, 3000},
                      Case{"swiglu_mlp", {{"M", 256}, {"K", 256}, {"N", 256}}, true, 2000},
                      Case{"softmax_matmul", {{"M", 256}, {"K", 256}, {"N", 256}}, false, 2000},
                      Case{"gqa", {{"M", 256}, {"N", 256}}, false, 2000},
                      Case{"rmsnorm_matmul", {{"M", 256}, {"K", 256}, {"N", 256}}, false, 2000, 8},
                      Case{"softmax_matmul", {{"M", 256}, {"K", 256}, {"N", 256}}, true, 2000, 2},
                      // psum-values and psum-loads twins: the values moved to PSUM are the
                      // same at every depth (rope candidate 398 once kept v10 in PSUM from its
                      // bufs=2 neighbour, where bufs=3 alone moved nothing).
                      Case{"rope", {{"M", 256}, {"N", 1024}}, false, 2000}),
    [](const auto& info) {
      return std::string(info.param.kernel) + (info.param.per_op ? "_per_op" : "") +
             (info.param.cores > 1 ? "_cores" + std::to_string(info.param.cores) : "");
    });

// The cores axis: [search] cores = N offers 1, 2, 4, .. and N cores per candidate, an innermost
// digit next to the engines and depths; the rest of the candidate is the same at every count.
TEST(CoresAxis, MultipliesTheSpaceByTheCoreChoices) {
  const target::Target& t = target::builtin_target("trn2");
  const ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/axon/relu.py",
                                       sem::OpTable::builtin());
  static SynthesisCache cache;
  KernelChoices choices = instruction_choices(m.kernels[0], t.isa, cache);
  SpaceOptions one;
  CandidateSpace base({{&m.kernels[0], &choices}}, t, {{"M", 1024}, {"N", 1024}}, one);
  struct Case {
    int max;
    std::vector<int> offered;
  };
  for (const Case& c :
       std::vector<Case>{{1, {1}}, {2, {1, 2}}, {6, {1, 2, 4, 6}}, {8, {1, 2, 4, 8}}}) {
    ASSERT_EQ(core_choice_count(c.max), static_cast<int>(c.offered.size())) << c.max;
    for (std::size_t d = 0; d < c.offered.size(); ++d)
      EXPECT_EQ(core_choice(c.max, static_cast<int>(d)), c.offered[d]) << c.max;
    SpaceOptions o;
    o.cores = c.max;
    CandidateSpace space({{&m.kernels[0], &choices}}, t, {{"M", 1024}, {"N", 1024}}, o);
    ASSERT_EQ(space.size(), base.size() * static_cast<std::int64_t>(c.offered.size())) << c.max;
    std::vector<int> seen(c.offered.size(), 0);
    CandidateCursor cursor(space);
    for (std::int64_t i = 0; i < space.size(); ++i) {
      Candidate cand = space.decode(i);
      auto at = std::find(c.offered.begin(), c.offered.end(), cand.cores);
      ASSERT_NE(at, c.offered.end()) << cand.cores;
      ++seen[static_cast<std::size_t>(at - c.offered.begin())];
      EXPECT_EQ(space.describe(i).find(" cores=") != std::string::npos, cand.cores > 1);
      const Lowered<Program>& p = cursor.at(i);
      ASSERT_TRUE(p) << space.describe(i);  // relu's row loop splits
      EXPECT_EQ(p->cores, cand.cores);
    }
    for (int n : seen) EXPECT_EQ(n, base.size());
  }
}

}  // namespace
}  // namespace ts::lower

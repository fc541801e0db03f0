// Pruning (sweep/prune.h) changes no result: over spaces of several Axon kernels and targets,
// score_range with the pruner keeps the same best `keep` (indices and latencies) and the same
// no-algebra / no-fusion baselines as without it, and counts what it skipped. A mesh latency that
// ties every candidate prunes nothing.
#include "tilesweep/sweep/prune.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <tuple>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/sweep/score.h"

namespace ts::sweep {
namespace {

struct PruneCase {
  const char* file;
  const char* target;
  sem::DimEnv dims;
  std::int64_t keep;
  std::int64_t per_section;  // SpaceSample: 0 every candidate
};

// A case's space (max_block 4) and sample, with what they refer to.
struct CaseSpace {
  explicit CaseSpace(const PruneCase& c)
      : t(target::builtin_target(c.target)),
        m(ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/axon/" + c.file,
                          sem::OpTable::builtin())),
        choices(lower::instruction_choices(m.kernels.front(), t.isa, cache)) {
    lower::SpaceOptions so;
    so.max_block = 4;
    space.emplace(std::vector<lower::SpaceVariant>{{&m.kernels.front(), &choices}}, t, c.dims, so);
    sample = SpaceSample(space->sections(), c.per_section, 7);
  }
  const target::Target& t;
  ir::Module m;
  lower::SynthesisCache cache;
  lower::KernelChoices choices;
  std::optional<lower::CandidateSpace> space;
  SpaceSample sample;
};

void expect_same(const RangeResult& a, const RangeResult& b) {
  ASSERT_EQ(a.top.size(), b.top.size());
  for (std::size_t i = 0; i < a.top.size(); ++i) {
    EXPECT_EQ(a.top[i].index, b.top[i].index) << "rank " << i;
    EXPECT_EQ(a.top[i].sim.latency_ns, b.top[i].sim.latency_ns) << "rank " << i;
  }
  EXPECT_EQ(a.no_algebra_ns, b.no_algebra_ns);
  EXPECT_EQ(a.no_fusion_ns, b.no_fusion_ns);
  EXPECT_EQ(a.scored, b.scored);
  EXPECT_EQ(a.infeasible, b.infeasible);
}

TEST(Prune, SameTopAndBaselines) {
  const PruneCase cases[] = {
      {"rmsnorm.py", "trn1", {{"M", 512}, {"N", 1024}}, 4, 0},
      {"softmax.py", "trn2", {{"M", 1024}, {"N", 512}}, 16, 0},
      {"matmul.py", "trn1", {{"M", 512}, {"K", 512}, {"N", 512}}, 1, 0},
      {"swiglu.py", "trn2", {{"M", 512}, {"N", 512}}, 5, 0},
      {"rmsnorm_matmul.py", "trn1", {{"M", 512}, {"K", 512}, {"N", 512}}, 4, 60},
  };
  std::int64_t pruned = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.file) + " on " + c.target);
    const CaseSpace cs(c);
    const target::Target& t = cs.t;
    const lower::CandidateSpace& space = *cs.space;
    const SpaceSample& sample = cs.sample;
    PruneOptions po;
    po.keep = c.keep;
    po.seeds = 16;
    PruneBounds b = prune_bounds(space, sample, t, po);
    EXPECT_GT(b.seeds, 0);
    const auto keep = static_cast<std::size_t>(c.keep);
    RangeResult full = score_range(space, sample, 0, sample.size(), t, keep);
    EXPECT_EQ(full.pruned, 0);
    // The thresholds are latencies of scored candidates: never below the true optima.
    ASSERT_FALSE(full.top.empty());
    EXPECT_GE(b.keep_ns, full.top.back().sim.latency_ns);
    EXPECT_GE(b.variant0_ns, full.no_algebra_ns);
    EXPECT_GE(b.unfused_ns, full.no_fusion_ns);
    Pruner plain(b, {});
    RangeResult pr = score_range(space, sample, 0, sample.size(), t, keep, nullptr, &plain);
    expect_same(full, pr);
    pruned += pr.pruned;
    // In pieces (as work units cut it), the same.
    RangeResult pieces;
    for (std::int64_t first = 0; first < sample.size(); first += 37)
      merge(pieces,
            score_range(space, sample, first, std::min(first + 37, sample.size()), t, keep, nullptr,
                        &plain),
            keep);
    expect_same(full, pieces);
    EXPECT_EQ(pieces.pruned, pr.pruned);
    // On a mesh adding a collective: the same rows.
    Pruner shifted(b, [](double ns) { return ns + 12345.5; });
    expect_same(full, score_range(space, sample, 0, sample.size(), t, keep, nullptr, &shifted));
    // A mesh latency where every candidate ties (a collective that hides the compute): nothing
    // is strictly slower, nothing pruned.
    Pruner tied(b, [](double ns) { return std::max(ns, 1e18); });
    RangeResult none = score_range(space, sample, 0, sample.size(), t, keep, nullptr, &tied);
    expect_same(full, none);
    EXPECT_EQ(none.pruned, 0);
  }
  EXPECT_GT(pruned, 0);
}

// The descent (PruneOptions::descent_rounds) never loosens a bound and, from seeds spread thin,
// tightens the keep threshold and prunes more: over the cases, strictly so in sum.
TEST(Prune, DescentTightensTheBounds) {
  const PruneCase cases[] = {
      {"swiglu_mlp.py", "trn1", {{"M", 512}, {"K", 512}, {"N", 512}}, 8, 0},
      {"rmsnorm_matmul.py", "trn2", {{"M", 512}, {"K", 512}, {"N", 512}}, 4, 0},
      {"softmax.py", "trn1", {{"M", 1024}, {"N", 1024}}, 4, 0},
  };
  std::int64_t pruned_without = 0, pruned_with = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.file) + " on " + c.target);
    const CaseSpace cs(c);
    const target::Target& t = cs.t;
    const lower::CandidateSpace& space = *cs.space;
    const SpaceSample& sample = cs.sample;
    PruneOptions po;
    po.keep = c.keep;
    po.seeds = 8;
    po.refine = 1;
    PruneOptions flat = po;
    flat.descent_rounds = 0;
    const PruneBounds with = prune_bounds(space, sample, t, po);
    const PruneBounds without = prune_bounds(space, sample, t, flat);
    EXPECT_LE(with.keep_ns, without.keep_ns);
    EXPECT_LE(with.variant0_ns, without.variant0_ns);
    EXPECT_LE(with.unfused_ns, without.unfused_ns);
    EXPECT_GT(with.seeds, without.seeds);
    const auto keep = static_cast<std::size_t>(c.keep);
    Pruner tight(with, {}), loose(without, {});
    RangeResult a = score_range(space, sample, 0, sample.size(), t, keep, nullptr, &tight);
    RangeResult b = score_range(space, sample, 0, sample.size(), t, keep, nullptr, &loose);
    expect_same(a, b);
    EXPECT_GE(a.pruned, b.pruned);
    pruned_with += a.pruned, pruned_without += b.pruned;
  }
  EXPECT_GT(pruned_with, pruned_without);
}

TEST(Prune, KeepAllPrunesNothing) {
  PruneBounds b;
  Pruner p(b, {});
  lower::CandidateSpace::Section s;
  EXPECT_FALSE(p.prunes(1e30, s));
  EXPECT_EQ(p.stop_after(s), PruneBounds::kNone);
  b.keep_ns = 10, b.variant0_ns = 20, b.unfused_ns = 30;
  Pruner q(b, {});
  s.variant = 1, s.fused = true;
  EXPECT_TRUE(q.prunes(11, s));
  EXPECT_FALSE(q.prunes(10, s));  // a tie is never pruned
  s.variant = 0;
  EXPECT_FALSE(q.prunes(15, s));
  EXPECT_TRUE(q.prunes(21, s));
  s.fused = false;
  EXPECT_FALSE(q.prunes(25, s));
  EXPECT_EQ(q.stop_after(s), 30);
}

// The ranks share the bounds as text (Plan): every value comes back bit for bit, infinities too.
TEST(Prune, BoundsLinesRoundTripExactly) {
  const PruneBounds cases[] = {
      {},
      {1.0 / 3.0, PruneBounds::kNone, 12345.678901234567, 7},
      {5e-324, 1e300, 0.1, 0},
      {2283171.123456789, 2283171.123456789, PruneBounds::kNone, 1 << 20},
  };
  std::string text;
  for (std::size_t i = 0; i < std::size(cases); ++i)
    text += bounds_line(static_cast<std::int64_t>(std::size(cases) - 1 - i), cases[i]);
  std::vector<PruneBounds> out(std::size(cases));
  read_bounds_lines(text, out);
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    const PruneBounds &a = cases[i], &b = out[std::size(cases) - 1 - i];
    EXPECT_EQ(std::tie(a.keep_ns, a.variant0_ns, a.unfused_ns, a.seeds),
              std::tie(b.keep_ns, b.variant0_ns, b.unfused_ns, b.seeds))
        << i;
  }
  for (const char* bad : {"4 0x1p+0 inf inf 3\n", "x 0x1p+0 inf inf 3\n", "0 0x1p+0 inf\n"})
    EXPECT_THROW(read_bounds_lines(bad, out), InternalError) << bad;
}

}  // namespace
}  // namespace ts::sweep

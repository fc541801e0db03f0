// Online splits (online_split.h): a reduction or matmul contraction whose operand reads an
// earlier running statistic of the same row is split tile by tile with the correction read off
// the kernel's own chain; each step is proved by Z3 over unbounded dims, and refused where the
// correction is no factor.
#include "tilesweep/lower/online_split.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "reference_check.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/interpreter.h"
#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/mutate/propagate.h"
#include "tilesweep/sim/execute.h"
#include "tilesweep/sweep/check.h"
#include "tilesweep/sweep/prepare.h"

namespace ts {
namespace {

ir::Module parse(const std::string& src) {
  return ir::parse_module(src, "t.py", sem::OpTable::builtin());
}

struct OnlineCase {
  std::string name, source;
  // Per consumer op, in node order: whether its online split is proved.
  std::vector<std::pair<std::string, bool>> expected;
};

class OnlineSplitCases : public ::testing::TestWithParam<OnlineCase> {};

TEST_P(OnlineSplitCases, ProvedOrRefused) {
  const OnlineCase& c = GetParam();
  ir::Module m = parse(c.source);
  const ir::Kernel& k = m.kernels.front();
  std::vector<lower::OnlineSplit> splits = lower::online_splits(k);
  ASSERT_EQ(splits.size(), c.expected.size());
  for (std::size_t i = 0; i < splits.size(); ++i) {
    const lower::OnlineSplit& s = splits[i];
    EXPECT_EQ(k.nodes[s.consumer].op, c.expected[i].first);
    EXPECT_EQ(k.nodes[s.statistic].op, "max");
    EXPECT_EQ(s.proved, c.expected[i].second) << s.why;
    if (!s.proved) {
      EXPECT_NE(s.proof.kind, verify::VerdictKind::Equivalent);
      EXPECT_NE(s.why.find("not proved"), std::string::npos) << s.why;
    }
    EXPECT_EQ(lower::proved_online(splits, s.consumer) != nullptr, s.proved);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Chains, OnlineSplitCases,
    ::testing::Values(
        // FlashAttention: the sum of exps and the P.V product rescaled by exp(m_old - m_new).
        OnlineCase{"AttentionWithTheDivisionAfterTheMatmul",
                   "def f(x: f32[M, K], w: f32[K, N]) -> f32[M, N]:\n"
                   "    e = exp(x - max(x, axis=1, keepdims=True))\n"
                   "    return matmul(e, w) / sum(e, axis=1, keepdims=True)\n",
                   {{"matmul", true}, {"sum", true}}},
        // The streamed value computed element-wise (scaled scores): the chain starts at it.
        OnlineCase{"ScaledScoresFromAMatmul",
                   "def f(q: f32[M, D], k: f32[D, N], v: f32[N, E]) -> f32[M, E]:\n"
                   "    s = matmul(q, k) * 0.125\n"
                   "    e = exp(s - max(s, axis=1, keepdims=True))\n"
                   "    return matmul(e, v) / sum(e, axis=1, keepdims=True)\n",
                   {{"matmul", true}, {"sum", true}}},
        // A scale after the shift keeps the correction a factor: exp((m_old - m_new) c).
        OnlineCase{"ScaledScores",
                   "def f(x: f32[M, K]) -> f32[M, 1]:\n"
                   "    return sum(exp((x - max(x, axis=1, keepdims=True)) * 0.125), axis=1,"
                   " keepdims=True)\n",
                   {{"sum", true}}},
        // Not a factor: x - m summed, exp(2x - m), and a scale outside the exp (the chain
        // applied to the old statistic counts it twice).
        OnlineCase{"ShiftWithoutExp",
                   "def f(x: f32[M, K]) -> f32[M, 1]:\n"
                   "    return sum(x - max(x, axis=1, keepdims=True), axis=1, keepdims=True)\n",
                   {{"sum", false}}},
        OnlineCase{"ScaleBeforeTheShift",
                   "def f(x: f32[M, K]) -> f32[M, 1]:\n"
                   "    return sum(exp(2.0 * x - max(x, axis=1, keepdims=True)), axis=1,"
                   " keepdims=True)\n",
                   {{"sum", false}}},
        OnlineCase{"ScaleOutsideTheExp",
                   "def f(x: f32[M, K]) -> f32[M, 1]:\n"
                   "    return sum(0.5 * exp(x - max(x, axis=1, keepdims=True)), axis=1,"
                   " keepdims=True)\n",
                   {{"sum", false}}},
        // The division before the matmul: its operand reads two statistics, not one (the
        // algebra stage moves the division past the matmul, which then qualifies).
        OnlineCase{"DivisionBeforeTheMatmul",
                   "def f(x: f32[M, K], w: f32[K, N]) -> f32[M, N]:\n"
                   "    e = exp(x - max(x, axis=1, keepdims=True))\n"
                   "    return matmul(e / sum(e, axis=1, keepdims=True), w)\n",
                   {{"sum", true}}},
        // A plain reduction (no statistic) is a plain split, not listed.
        OnlineCase{"NoStatistic",
                   "def f(x: f32[M, K]) -> f32[M, 1]:\n"
                   "    return sum(exp(x), axis=1, keepdims=True)\n",
                   {}}),
    [](const ::testing::TestParamInfo<OnlineCase>& info) { return info.param.name; });

TEST(OnlineSplit, TheCorrectionIsTheKernelsOwnChain) {
  ir::Module m = parse(
      "def f(x: f32[M, K], w: f32[K, N]) -> f32[M, N]:\n"
      "    e = exp(x - max(x, axis=1, keepdims=True))\n"
      "    return matmul(e, w) / sum(e, axis=1, keepdims=True)\n");
  const ir::Kernel& k = m.kernels.front();
  std::vector<lower::OnlineSplit> splits = lower::online_splits(k);
  ASSERT_EQ(splits.size(), 2u);
  const lower::OnlineSplit& mm = splits[0];
  EXPECT_EQ(k.nodes[mm.consumer].op, "matmul");
  ASSERT_EQ(mm.chain.size(), 2u);  // sub, exp
  EXPECT_EQ(k.nodes[mm.chain[0]].op, "sub");
  EXPECT_EQ(k.nodes[mm.chain[1]].op, "exp");
  EXPECT_EQ(k.nodes[mm.source].param, 0);
  lower::OnlineSplitKernels pk = lower::online_split_kernels(k, mm);
  EXPECT_EQ(pk.whole.params.size(), 2u);
  EXPECT_EQ(pk.split.params.size(), 2u);
}

// The attention kernels of both suites: the online sum of exps in every one, the online P.V
// matmul in the variant the algebra stage makes with the division moved past it, never by the
// kernel's name.
TEST(OnlineSplit, SuiteAttentionKernels) {
  for (const char* file : {"axon/softmax_matmul.py", "axon/gqa.py", "nkibench/gqa.py"}) {
    SCOPED_TRACE(file);
    ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/" + file,
                                   sem::OpTable::builtin());
    verify::VerdictCache cache;
    mutate::VariantSet vs = mutate::propagate(m.kernels.front(), {}, &cache);
    bool matmul = false, sum = false;
    for (const auto& v : vs.variants)
      for (const auto& s : lower::online_splits(v.kernel, {}, &cache)) {
        matmul = matmul || (s.proved && v.kernel.nodes[s.consumer].op == "matmul");
        sum = sum || (s.proved && v.kernel.nodes[s.consumer].op == "sum");
      }
    EXPECT_TRUE(matmul);
    EXPECT_TRUE(sum);
  }
}

using test::Prepared;

bool online(const lower::CandidateSpace& space, const lower::Candidate& c) {
  lower::ProgramPlan plan = space.plan(c);
  return std::any_of(plan.tiling.begin(), plan.tiling.end(),
                     [](const lower::GroupTiling& t) { return t.online > 0; });
}

struct OnlineKernel {
  std::string name, file, source;
  sem::DimEnv dims;
  // A causal mask on the streamed row (query row i keeps keys j <= i): every online candidate's
  // key tile loop is guarded (verify/tile_skip.h), and runs exactly the key tiles that hold a
  // kept element.
  bool causal = false;
};

void PrintTo(const OnlineKernel& c, std::ostream* os) { *os << c.name; }

class OnlineCandidates : public ::testing::TestWithParam<OnlineKernel> {};

// The key tile loop of an online candidate's program (the loop the guard is on), or -1 where
// no block has a guard.
int guarded_block(const lower::Program& p) {
  for (std::size_t b = 0; b < p.blocks.size(); ++b)
    if (p.blocks[b].guard) return static_cast<int>(b);
  return -1;
}

// Key tiles a causal mask leaves an element in: per strip of `pt` rows, the tiles of `w` keys
// starting at or before the strip's last row.
std::int64_t causal_tiles(std::int64_t rows, std::int64_t keys, std::int64_t pt, std::int64_t w) {
  std::int64_t n = 0;
  for (std::int64_t r = 0; r < rows / pt; ++r)
    for (std::int64_t f = 0; f < keys / w; ++f) n += f * w <= r * pt + pt - 1;
  return n;
}

// Every online candidate (key tiles streamed with the rescaled running sum and accumulator) of
// the kernel's variants, run by the functional ISA interpreter against the reference; with a
// causal mask, the key tiles above the diagonal skipped (the guarded loop's instructions run
// once per kept tile, no more).
TEST_P(OnlineCandidates, MatchTheReference) {
  const OnlineKernel& oc = GetParam();
  ir::Module m = oc.file.empty()
                     ? parse(oc.source)
                     : ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/" + oc.file,
                                       sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  const target::Target& t = target::builtin_target("trn2");
  Prepared p(k, t, 8);
  lower::CandidateSpace space(p.pk.space_variants(), t, oc.dims);
  auto inputs = sweep::check_inputs(k, oc.dims, 7);
  auto ref = ir::evaluate(k, oc.dims, inputs, ir::Precision::F64);
  std::mt19937_64 rng(5);
  int checked = 0;
  for (int tries = 0; tries < 20000 && checked < 6; ++tries) {
    auto i = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(space.size()));
    lower::Candidate c = space.decode(i);
    if (!online(space, c)) continue;
    lower::Lowered<lower::Program> program = space.materialize(c);
    if (!program) continue;  // an instruction fusion the online nest does not place
    auto out = sim::execute(*program, inputs);
    ASSERT_TRUE(test::matches(out, ref)) << space.describe(i);
    ++checked;
    int key_loop = guarded_block(*program);
    EXPECT_EQ(key_loop >= 0, oc.causal) << space.describe(i);
    if (key_loop < 0 || !oc.causal) continue;
    lower::ProgramPlan plan = space.plan(c);
    const auto* t = &plan.tiling.front();
    for (const auto& g : plan.tiling)
      if (g.online > 0) t = &g;
    std::int64_t rows = oc.dims.at("M"), runs = -1;
    std::vector<std::int64_t> executions = program->executions();
    for (const auto& item : program->blocks[static_cast<std::size_t>(key_loop)].items)
      if (item.inst >= 0) runs = executions[static_cast<std::size_t>(item.inst)];
    EXPECT_EQ(runs, causal_tiles(rows, rows, t->pt, t->online)) << space.describe(i);
  }
  EXPECT_GT(checked, 0) << "no online candidate of " << oc.name;
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, OnlineCandidates,
    ::testing::Values(
        OnlineKernel{
            "softmax_matmul", "axon/softmax_matmul.py", "", {{"M", 128}, {"K", 2048}, {"N", 64}}},
        OnlineKernel{"division_after",
                     "",
                     "def f(x: f32[M, K], w: f32[K, N]) -> f32[M, N]:\n"
                     "    e = exp(x - max(x, axis=1, keepdims=True))\n"
                     "    return matmul(e, w) / sum(e, axis=1, keepdims=True)\n",
                     {{"M", 256}, {"K", 1024}, {"N", 128}}},
        // The streamed row made in the nest by a score matmul (q k^T, scaled),
        // computed key tile by key tile in PSUM with q^T read once per strip (axon
        // GQA: functional_test.cpp, OnlineAttention).
        OnlineKernel{"attention",
                     "",
                     "def f(q: f32[M, D], k: f32[N, D], v: f32[N, E]) -> f32[M, E]:\n"
                     "    s = matmul(q, transpose(k, axes=(1, 0))) * 0.125\n"
                     "    e = exp(s - max(s, axis=1, keepdims=True))\n"
                     "    return matmul(e, v) / sum(e, axis=1, keepdims=True)\n",
                     {{"M", 256}, {"D", 64}, {"N", 1024}, {"E", 64}}},
        // Causal attention (jobs/kernels/examples/causal_gqa.py, one head): the
        // mask an affine_select per key tile, the tiles above the diagonal skipped.
        OnlineKernel{"causal_attention",
                     "",
                     "def f(q: f32[M, D], k: f32[M, D], v: f32[M, E]) -> f32[M, E]:\n"
                     "    s = matmul(q, transpose(k, axes=(1, 0))) * 0.125\n"
                     "    masked = where(iota(M, axis=1) <= iota(M, axis=0), s, -inf)\n"
                     "    e = exp(masked - max(masked, axis=1, keepdims=True))\n"
                     "    return matmul(e, v) / sum(e, axis=1, keepdims=True)\n",
                     {{"M", 512}, {"D", 64}, {"E", 64}},
                     true},
        // No online matmul: the softmax's row is the output. The running max and the
        // rescaled running sum over the key tiles, then a second pass that reads each key
        // tile again (a kernel input) or computes its scores again (a batched matmul)
        // and stores exp(s - max) / sum tile by tile (online_nest.cpp).
        OnlineKernel{"two_pass_softmax", "axon/softmax.py", "", {{"M", 256}, {"N", 2048}}},
        // Per-row results only (no second pass): the tail reads the final max.
        OnlineKernel{"one_pass_logsumexp",
                     "",
                     "def lse(x: f32[M, N]) -> f32[M, 1]:\n"
                     "    m = max(x, axis=1, keepdims=True)\n"
                     "    return m + log(sum(exp(x - m), axis=1, keepdims=True))\n",
                     {{"M", 256}, {"N", 2048}}},
        OnlineKernel{"two_pass_scores",
                     "nkibench/bmm_softmax.py",
                     "",
                     {{"B", 2}, {"M", 128}, {"K", 64}, {"N", 2048}}}),
    [](const auto& info) { return info.param.name; });

// Whole-row nests of a causal attention (no online tiling: the masked row on chip whole, one
// select over it, the score matmul and the P.V matmul over key tiles): candidates of the
// kernel's variants (the division before and after the P.V matmul among them) run by the
// functional interpreter against the reference. Where the lowering guarded loops over fully
// masked key tiles (materialize/masked_tiles.cpp), the guarded instructions run fewer times than
// the loops' trips, the skipped score windows leave stale data the select overwrites, and the
// outputs still agree.
struct WholeRowKernel {
  std::string name, file, source;
  sem::DimEnv dims;
};

void PrintTo(const WholeRowKernel& c, std::ostream* os) { *os << c.name; }

class WholeRowCandidates : public ::testing::TestWithParam<WholeRowKernel> {};

TEST_P(WholeRowCandidates, MatchTheReferenceWithMaskedTilesSkipped) {
  const WholeRowKernel& wk = GetParam();
  ir::Module m = wk.file.empty()
                     ? parse(wk.source)
                     : ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/" + wk.file,
                                       sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  const target::Target& t = target::builtin_target("trn2");
  Prepared p(k, t, 8);
  lower::CandidateSpace space(p.pk.space_variants(), t, wk.dims);
  auto inputs = sweep::check_inputs(k, wk.dims, 7);
  auto ref = ir::evaluate(k, wk.dims, inputs, ir::Precision::F64);
  std::mt19937_64 rng(11);
  int guarded = 0, plain = 0;
  for (int tries = 0; tries < 4000 && (guarded < 4 || plain < 1); ++tries) {
    auto i = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(space.size()));
    lower::Candidate c = space.decode(i);
    if (online(space, c)) continue;
    lower::Lowered<lower::Program> program = space.materialize(c);
    if (!program) continue;
    bool has_guard = guarded_block(*program) >= 0;
    if (has_guard ? guarded >= 4 : plain >= 1) continue;
    auto out = sim::execute(*program, inputs);
    ASSERT_TRUE(test::matches(out, ref)) << space.describe(i);
    (has_guard ? guarded : plain)++;
    if (!has_guard) continue;
    // The guarded loops' instructions run no more than the loops around them trip, and some
    // fewer (a pipelined loop's last copy may hold only strips that keep every key tile).
    std::vector<std::int64_t> executions = program->executions();
    bool fewer = false;
    for (std::size_t b = 0; b < program->blocks.size(); ++b) {
      if (!program->blocks[b].guard) continue;
      std::int64_t trips = 1;
      for (int a = static_cast<int>(b); a >= 0;
           a = program->blocks[static_cast<std::size_t>(a)].parent)
        trips *= program->blocks[static_cast<std::size_t>(a)].trips;
      for (const auto& item : program->blocks[b].items)
        if (item.inst >= 0) {
          std::int64_t runs = executions[static_cast<std::size_t>(item.inst)];
          EXPECT_LE(runs, trips) << space.describe(i);
          fewer = fewer || runs < trips;
        }
    }
    EXPECT_TRUE(fewer) << space.describe(i);
  }
  EXPECT_GT(guarded, 0) << "no whole-row candidate of " << wk.name << " skips a masked tile";
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, WholeRowCandidates,
    ::testing::Values(
        WholeRowKernel{"causal_attention",
                       "",
                       "def f(q: f32[M, D], k: f32[M, D], v: f32[M, E]) -> f32[M, E]:\n"
                       "    s = matmul(q, transpose(k, axes=(1, 0))) * 0.125\n"
                       "    masked = where(iota(M, axis=1) <= iota(M, axis=0), s, -inf)\n"
                       "    e = exp(masked - max(masked, axis=1, keepdims=True))\n"
                       "    return matmul(e / sum(e, axis=1, keepdims=True), v)\n",
                       {{"M", 512}, {"D", 64}, {"E", 64}}},
        WholeRowKernel{"causal_gqa", "examples/causal_gqa.py", "", {{"S", 256}, {"D", 64}}}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ts

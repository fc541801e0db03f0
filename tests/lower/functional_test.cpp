// Every lowering path checked on numbers: a seeded random sample of the candidates of each
// suite kernel at a small shape is materialized, run by the functional ISA interpreter and
// compared with the reference interpreter (|out - ref| <= 1e-4 + 1e-4 |ref|). The sample size
// comes from TS_FUNCTIONAL_SAMPLES (default 40; the issue's figure uses 200).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <numeric>
#include <random>

#include "reference_check.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/interpreter.h"
#include "tilesweep/lower/fusion.h"
#include "tilesweep/lower/legal_engine.h"
#include "tilesweep/lower/nki.h"
#include "tilesweep/lower/psum_copy.h"
#include "tilesweep/lower/reduction_fusion.h"
#include "tilesweep/sim/execute.h"
#include "tilesweep/sim/roofline.h"
#include "tilesweep/sim/simulate.h"
#include "tilesweep/sweep/check.h"
#include "tilesweep/sweep/prepare.h"

namespace ts {
namespace {

int samples() {
  const char* s = std::getenv("TS_FUNCTIONAL_SAMPLES");
  return s ? std::atoi(s) : 40;
}

// The smallest dims (all equal) that satisfy the kernel's preconditions.
sem::DimEnv small_dims(const ir::Kernel& k) {
  // Batched kernels (rank >= 3 values, inputs or intermediates) at 32 per dim: the reference
  // interpreter is the cost (mamba's scan is cubic in its free dim per row).
  bool batched = false;
  for (const auto& n : k.nodes) batched = batched || n.shape.size() >= 3;
  for (std::int64_t v :
       batched ? std::vector<std::int64_t>{32, 64} : std::vector<std::int64_t>{128, 256, 64}) {
    sem::DimEnv env;
    for (const auto& d : k.dims) env[d] = v;
    bool ok = true;
    for (const auto& p : k.preconditions) ok = ok && p.holds(env).value_or(false);
    if (ok) return env;
  }
  return {};
}

using test::matches;

ir::Module suite_module(const std::string& file) {
  return ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/" + file,
                         sem::OpTable::builtin());
}

// A kernel's variants (up to `max_variants`) with their instruction choices on target `t`, and
// the synthesis cache those choices point into: what candidate spaces are built over.
using test::Prepared;
std::unique_ptr<Prepared> prepare(const ir::Kernel& k, const target::Target& t, int max_variants) {
  return std::make_unique<Prepared>(k, t, max_variants);
}

// Runs a seeded sample of the candidates of `k` at `dims` (of its original variant only, with
// `original_only`) and compares each with the reference; the number checked.
int check_sample(const ir::Kernel& k, const sem::DimEnv& dims, bool original_only) {
  const target::Target& t = target::builtin_target("trn2");
  auto prepared = prepare(k, t, 8);
  lower::SpaceOptions so;
  so.max_block = 2;
  auto variants = prepared->pk.space_variants();
  if (original_only) variants.resize(1);
  lower::CandidateSpace space(variants, t, dims, so);
  if (space.size() == 0) return 0;
  auto inputs = sweep::check_inputs(k, dims, 7);
  auto ref = ir::evaluate(k, dims, inputs, ir::Precision::F64);
  std::mt19937_64 rng(11);
  int checked = 0, unplaceable = 0;
  // A space no larger than the sample is checked whole, each candidate once (a scan's
  // instruction semantics cost O(F^2) per row in the functional interpreter).
  bool whole = space.size() <= samples();
  std::int64_t count = whole ? space.size() : samples();
  for (std::int64_t s = 0; s < count; ++s) {
    std::int64_t i =
        whole || s == 0
            ? s
            : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(space.size()));
    lower::Lowered<lower::Program> lowered = space.materialize(i);
    if (!lowered) {
      ++unplaceable;
      continue;
    }
    const lower::Program& p = *lowered;
    auto m = matches(sim::execute(p, inputs), ref);
    if (!m) {
      ADD_FAILURE() << k.name << " candidate " << i << ": " << m.message() << "\n"
                    << space.describe(i);
      return -1;
    }
    ++checked;
  }
  ::testing::Test::RecordProperty("unplaceable", unplaceable);
  return checked;
}

class Functional : public ::testing::TestWithParam<std::string> {};

TEST_P(Functional, SampledCandidatesMatchTheReference) {
  ir::Module m = suite_module(GetParam());
  const ir::Kernel& k = m.kernels.front();
  sem::DimEnv dims = small_dims(k);
  ASSERT_FALSE(dims.empty()) << "no small shape satisfies " << k.name;
  int checked = check_sample(k, dims, false);
  if (checked == 0) GTEST_SKIP() << k.name << " has no program yet";
  EXPECT_GT(checked, 0);
  RecordProperty("checked", checked);
}

// A computed value that is only an output through a transpose or a reshape is stored through a
// view of the output (a transposed view, or an alias in the value's shape; no copy): the original
// variants of these kernels have programs, and they compute the reference.
TEST(Functional, StoredThroughALayoutOp) {
  const char* sources[] = {
      // attention's output heads back to tokens (NKIBench GQA), on an N x N score tile
      "def f(p: f32[B, H, N, N], v: f32[B, H, N, D]) -> f32[B, N, H, D]:\n"
      "    return transpose(matmul(p, v), axes=(0, 2, 1, 3))\n",
      // element-wise, rows and columns swapped
      "def g(x: f32[M, N]) -> f32[N, M]:\n    return transpose(exp(x))\n",
      // a projection viewed as heads [M, H, D] (issue 22: an output that is a reshape)
      "def h(x: f32[M, N], w: f32[N, H * D]) -> f32[M, H, D]:\n"
      "    return reshape(matmul(x, w), (M, H, D))\n",
      // a fused row split by slices into two head views (rmsnorm_qkv's outputs)
      "def s(x: f32[M, 3 * D]):\n"
      "    a = reshape(exp(x[:, : 2 * D]), (M, 2, D))\n"
      "    return a, reshape(exp(x[:, 2 * D :]), (M, 1, D))\n",
  };
  for (const char* src : sources) {
    ir::Module m = ir::parse_module(src, "t.py", sem::OpTable::builtin());
    const ir::Kernel& k = m.kernels.front();
    sem::DimEnv dims;
    for (const auto& d : k.dims) dims[d] = d == "B" || d == "H" ? 2 : 128;
    EXPECT_GT(check_sample(k, dims, true), 0) << src;
  }
}

// A kernel parsed from `src`, the candidate space of its original variant at `dims` on trn2, and
// seeded inputs with their f64 reference: what the view-output tests below check candidates on.
struct SourceSpace {
  SourceSpace(const char* src, sem::DimEnv d)
      : module(ir::parse_module(src, "t.py", sem::OpTable::builtin())),
        dims(std::move(d)),
        prepared(prepare(kernel(), target::builtin_target("trn2"), 1)),
        space(prepared->pk.space_variants(), target::builtin_target("trn2"), dims, options()),
        inputs(sweep::check_inputs(kernel(), dims, 5)),
        ref(ir::evaluate(kernel(), dims, inputs, ir::Precision::F64)) {}
  const ir::Kernel& kernel() const { return module.kernels.front(); }
  static lower::SpaceOptions options() {
    lower::SpaceOptions so;
    so.max_block = 2;
    return so;
  }
  ir::Module module;
  sem::DimEnv dims;
  std::unique_ptr<Prepared> prepared;
  lower::CandidateSpace space;
  std::vector<ir::Tensor> inputs, ref;
};

bool stores_a_copy(const lower::Program& p) {
  return std::any_of(p.insts.begin(), p.insts.end(), [&](const lower::Inst& in) {
    return in.dma && in.store && p.buffers[in.in[0]].name.starts_with("copy");
  });
}

// Rope's halves computed per head ([H, T, D], tokens on the partitions) and concatenated, the
// output the tokens' layout [T, H, D]: the concat is placed in the transposed view of the output
// (no copy after the nests, which held H = 4 rows per tile and made the llama layer's rope 385 us
// of DMA latency), and the candidates compute the reference.
TEST(Functional, TransposedConcatIsStoredWithoutACopy) {
  SourceSpace s(
      "def r(x: f32[H, T, D], c: f32[H, T, D]) -> f32[T, H, 2 * D]:\n"
      "    return transpose(concat((x * c, x - c), axis=2), axes=(1, 0, 2))\n",
      {{"H", 4}, {"T", 256}, {"D", 64}});
  ASSERT_GT(s.space.size(), 0);
  int checked = 0;
  for (std::int64_t i = 0; i < s.space.size(); ++i) {
    lower::Lowered<lower::Program> p = s.space.materialize(i);
    if (!p) continue;
    EXPECT_FALSE(stores_a_copy(*p)) << "candidate " << i << " copies its output";
    ASSERT_TRUE(matches(sim::execute(*p, s.inputs), s.ref)) << s.space.describe(i);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

// A copied output's tiles fill the partitions from whichever leading dim can ([M, H, D] with
// H = 2 copies M's rows over the partitions, not H's two).
TEST(Functional, CopyTilesFillThePartitions) {
  SourceSpace s(
      "def a(x: f32[M, H, D]):\n"
      "    y = exp(x)\n"
      "    return y, y[:, :, : D // 2]\n",
      {{"M", 256}, {"H", 2}, {"D", 64}});
  ASSERT_GT(s.space.size(), 0);
  lower::Lowered<lower::Program> p = s.space.materialize(0);
  ASSERT_TRUE(p) << p.no_program().reason;
  int copies = 0;
  for (const lower::Buffer& b : p->buffers)
    if (b.name.starts_with("copy")) {
      EXPECT_EQ(b.shape.front(), 128) << "copy tile " << b.name;
      ++copies;
    }
  EXPECT_EQ(copies, 1);
  EXPECT_TRUE(matches(sim::execute(*p, s.inputs), s.ref));
}

// An output that is a view no in-place placement stores (issue 22: a slice of a value other ops
// also read, or that is an output too; a fused projection split by slices into head views) is
// copied through its view into its own tensor after the nests: the original variants of these
// kernels have programs, every one of which copies, and they compute the reference.
TEST(Functional, CopiedOutputsMatchTheReference) {
  const char* sources[] = {
      // a slice of a matmul result that an element-wise op also reads
      "def a(x: f32[M, N], w: f32[N, 2 * D]):\n"
      "    y = matmul(x, w)\n"
      "    return y[:, :D], relu(y)\n",
      // the value is an output too; a strided slice of its columns and a slice of its rows
      "def b(x: f32[M, N]):\n"
      "    y = exp(x)\n"
      "    return y, y[:, 1::2], y[: M // 2, :]\n",
      // rmsnorm_qkv's form: one projection split by slices into head views [M, heads, D]
      "def c(x: f32[M, N], w: f32[N, 3 * D]):\n"
      "    qkv = matmul(x, w)\n"
      "    q = reshape(qkv[:, : 2 * D], (M, 2, D))\n"
      "    return q, reshape(qkv[:, 2 * D :], (M, 1, D))\n",
      // a transposed view of a value that is also reduced, and a slice of an input
      "def d(x: f32[M, N]):\n"
      "    y = exp(x)\n"
      "    return transpose(y), sum(y, axis=1, keepdims=True), x[:, : N // 2]\n",
  };
  for (const char* src : sources) {
    SourceSpace s(src, {{"M", 256}, {"N", 128}, {"D", 64}});
    ASSERT_GT(s.space.size(), 0) << src;
    int checked = 0;
    std::int64_t step = std::max<std::int64_t>(1, s.space.size() / 8);
    for (std::int64_t i = 0; i < s.space.size(); i += step) {
      lower::Lowered<lower::Program> p = s.space.materialize(i);
      if (!p) continue;
      EXPECT_TRUE(stores_a_copy(*p)) << src << "candidate " << i << " copies no output";
      ASSERT_TRUE(matches(sim::execute(*p, s.inputs), s.ref))
          << src << "candidate " << i << " (" << s.space.describe(i) << ")";
      ++checked;
    }
    EXPECT_GT(checked, 0) << src;
  }
}

// `repeat` along a tiled dim (issue 22): a row or column tile of at most `repeat` elements
// aligned to them reads one element of the operand, broadcast along the tile dim. Each kernel has
// candidates that lower so, and every one computes the reference.
TEST(Functional, RepeatAlongTiledDimsMatchesTheReference) {
  const char* sources[] = {
      // each row repeated over a whole row tile (a partition broadcast per tile)
      "def r(x: f32[M, N]) -> f32[128 * M, N]:\n"
      "    return exp(repeat(x, 128, axis=0))\n",
      // each column repeated 512 times: an output copied through the repeated view (a variant
      // moves exp above the repeat) in tiles of 512 columns
      "def c(x: f32[M, N]) -> f32[M, 512 * N]:\n"
      "    return exp(repeat(x, 512, axis=1))\n",
  };
  const target::Target& t = target::builtin_target("trn2");
  for (const char* src : sources) {
    ir::Module m = ir::parse_module(src, "t.py", sem::OpTable::builtin());
    const ir::Kernel& k = m.kernels.front();
    sem::DimEnv dims = {{"M", 2}, {"N", 4}};
    auto prepared = prepare(k, t, 8);
    lower::SpaceOptions so;
    so.max_block = 2;
    lower::CandidateSpace space(prepared->pk.space_variants(), t, dims, so);
    ASSERT_GT(space.size(), 0) << src;
    auto inputs = sweep::check_inputs(k, dims, 5);
    auto ref = ir::evaluate(k, dims, inputs, ir::Precision::F64);
    int checked = 0;
    std::int64_t step = std::max<std::int64_t>(1, space.size() / 20);
    for (std::int64_t i = 0; i < space.size(); i += step) {
      lower::Lowered<lower::Program> p = space.materialize(i);
      if (!p) continue;
      ASSERT_TRUE(matches(sim::execute(*p, inputs), ref))
          << src << "candidate " << i << " (" << space.describe(i) << ")";
      ++checked;
    }
    EXPECT_GT(checked, 0) << src;
  }
}

// `repeat` along a tiled dim whose tile spans several repeated elements (issue 22 item 1): the
// DMA reads through a stride-0 access dim (Access::repeat) — a row tile of 128 reading 64 rows
// twice, a tile starting inside a group (a repeat count not dividing 128, a slice) — or, along the
// free axis, the distinct columns load contiguously and the instruction reads them through a
// repeating window (Window::repeat). Each kernel has candidates and a heuristic program, a sample
// computes the reference, and the best is within `factor` of the attainable bound.
struct RepeatCase {
  const char* name;
  const char* source;
  sem::DimEnv dims;
  double factor;  // best simulated latency <= factor x attainable
};

class RepeatedAccesses : public ::testing::TestWithParam<RepeatCase> {};

TEST_P(RepeatedAccesses, MatchTheReferenceNearTheBound) {
  const RepeatCase& c = GetParam();
  const target::Target& t = target::builtin_target("trn2");
  ir::Module m = ir::parse_module(c.source, "t.py", sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  auto prepared = prepare(k, t, 8);
  lower::SpaceOptions so;
  so.max_block = 2;
  lower::CandidateSpace space(prepared->pk.space_variants(), t, c.dims, so);
  ASSERT_GT(space.size(), 0);
  EXPECT_TRUE(space.heuristic().has_value()) << "no heuristic program";
  auto inputs = sweep::check_inputs(k, c.dims, 5);
  auto ref = ir::evaluate(k, c.dims, inputs, ir::Precision::F64);
  double best = 1e300;
  int checked = 0;
  std::int64_t step = std::max<std::int64_t>(1, space.size() / 12);
  for (std::int64_t i = 0; i < space.size(); ++i) {
    lower::Lowered<lower::Program> p = space.materialize(i);
    if (!p) continue;
    sim::SimResult r = sim::simulate(*p, t);
    if (r.feasible) best = std::min(best, r.latency_ns);
    if (i % step) continue;
    ASSERT_TRUE(matches(sim::execute(*p, inputs), ref))
        << "candidate " << i << " (" << space.describe(i) << ")";
    ++checked;
  }
  EXPECT_GT(checked, 0);
  double bound = sim::roofline(k, c.dims, t).attainable_ns;
  EXPECT_LE(best, c.factor * bound) << "best " << best << " ns, attainable " << bound << " ns";
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, RepeatedAccesses,
    ::testing::Values(
        RepeatCase{"rows",
                   "def f(x: f32[M, N]) -> f32[2 * M, N]:\n"
                   "    return exp(repeat(x, 2, axis=0))\n",
                   {{"M", 128}, {"N", 512}},
                   3.0},
        RepeatCase{"columns",
                   "def f(x: f32[M, N]) -> f32[M, 4 * N]:\n"
                   "    return exp(repeat(x, 4, axis=1))\n",
                   {{"M", 128}, {"N", 512}},
                   3.0},
        // 3 does not divide 128: the second and third row tiles start inside a group
        RepeatCase{"rows_by_3",
                   "def f(x: f32[M, N]) -> f32[3 * M, N]:\n"
                   "    return exp(repeat(x, 3, axis=0))\n",
                   {{"M", 128}, {"N", 256}},
                   3.5},  // three row tiles of 128 KiB: fixed DMA costs weigh
        // a batch dim repeated 3 times, sliced from inside a group (6 heads of 12)
        RepeatCase{"batch_sliced",
                   "def f(x: f32[4, M, N]) -> f32[6, M, N]:\n"
                   "    return exp(repeat(x, 3, axis=0)[1:7])\n",
                   {{"M", 128}, {"N", 256}},
                   3.0},
        RepeatCase{"row_slice",
                   "def f(x: f32[M, N]) -> f32[128, N]:\n"
                   "    return exp(repeat(x, 2, axis=0)[64:192, :])\n",
                   {{"M", 128}, {"N", 512}},
                   3.0},
        RepeatCase{"row_slice_inside_a_group",
                   "def f(x: f32[M, N]) -> f32[128, N]:\n"
                   "    return exp(repeat(x, 2, axis=0)[1:129, :])\n",
                   {{"M", 128}, {"N", 512}},
                   3.0},
        // a step that is a multiple of the repeat count: one element per group (x itself)
        RepeatCase{"column_step",
                   "def f(x: f32[M, N]) -> f32[M, N]:\n"
                   "    return exp(repeat(x, 2, axis=1)[:, 1::2])\n",
                   {{"M", 128}, {"N", 512}},
                   3.0}),
    [](const auto& info) { return std::string(info.param.name); });

// Masks built from iota (issue 22) on numbers: each op reading one computes it per tile, by
// affine_select with the tile's origin in its offset (found by synthesis, proved), at shapes of
// several row tiles and column tiles, so that the offsets move with the loops. Every candidate
// of the original variant is checked (or a sample of 40), and some use affine_select.
TEST(Functional, MasksMatchTheReference) {
  const char* sources[] = {
      // a causal softmax over [S, S] scores
      "def f(s: f32[S, S]) -> f32[S, S]:\n"
      "    m = where(iota(S, axis=1) <= iota(S, axis=0), s, -inf)\n"
      "    e = exp(m - max(m, axis=1, keepdims=True))\n"
      "    return e / sum(e, axis=1, keepdims=True)\n",
      // a shifted band and a mask of rows alone, on heads [H, S, S]
      "def g(s: f32[H, S, S]) -> f32[H, S, S]:\n"
      "    b = where(iota(S, axis=1) < iota(S, axis=0) + 2, s, 0.0)\n"
      "    return exp(where(iota(S, axis=0) >= 3, b, -1.0))\n",
      // a free-tiled element-wise nest (columns tiled)
      "def h(s: f32[M, N]) -> f32[M, N]:\n"
      "    return exp(where(iota(N, axis=1) > iota(M, axis=0), s, -inf))\n",
  };
  const target::Target& t = target::builtin_target("trn2");
  for (const char* src : sources) {
    ir::Module m = ir::parse_module(src, "t.py", sem::OpTable::builtin());
    const ir::Kernel& k = m.kernels.front();
    sem::DimEnv dims = {{"S", 256}, {"H", 2}, {"M", 256}, {"N", 1024}};
    auto prepared = prepare(k, t, 1);
    lower::SpaceOptions so;
    so.max_block = 2;
    lower::CandidateSpace space(prepared->pk.space_variants(), t, dims, so);
    ASSERT_GT(space.size(), 0) << src;
    auto inputs = sweep::check_inputs(k, dims, 3);
    auto ref = ir::evaluate(k, dims, inputs, ir::Precision::F64);
    int selects = 0;
    std::int64_t step = std::max<std::int64_t>(1, space.size() / 40);
    for (std::int64_t i = 0; i < space.size(); i += step) {
      lower::Lowered<lower::Program> p = space.materialize(i);
      if (!p) continue;
      for (const auto& in : p->insts)
        selects += in.spec->op.name == "affine_select" && !in.moving.empty();
      ASSERT_TRUE(matches(sim::execute(*p, inputs), ref))
          << src << "candidate " << i << " (" << space.describe(i) << ")";
    }
    EXPECT_GT(selects, 0) << src;
  }
}

// A spilling candidate (a fused nest's matmul results written to HBM and loaded back by the
// later ops) computes the reference, and the simulator counts its spill traffic. The space offers
// spills only where a nest does not fit without one, so the small shape here takes every fused
// section's first candidate with spilling forced.
TEST(Functional, SpilledMatmulResultsMatchTheReference) {
  const target::Target& t = target::builtin_target("trn2");
  for (const char* file : {"axon/rmsnorm_matmul.py", "axon/swiglu_mlp.py"}) {
    ir::Module m = suite_module(file);
    const ir::Kernel& k = m.kernels.front();
    sem::DimEnv dims = small_dims(k);
    auto prepared = prepare(k, t, 4);
    auto variants = prepared->pk.space_variants();
    lower::CandidateSpace space(variants, t, dims);
    auto inputs = sweep::check_inputs(k, dims, 7);
    auto ref = ir::evaluate(k, dims, inputs, ir::Precision::F64);
    int spilled = 0;
    for (const auto& sec : space.sections()) {
      if (!sec.fused) continue;
      lower::Candidate c = space.decode(sec.first);
      lower::ProgramPlan plan = space.plan(c);
      for (auto& g : plan.tiling) g.spill = true;
      lower::Program p = lower::materialize(*variants[c.variant].kernel, dims, t, plan).value();
      if (std::none_of(p.buffers.begin(), p.buffers.end(),
                       [](const lower::Buffer& b) { return b.spill; }))
        continue;
      ++spilled;
      auto out = sim::execute(p, inputs);
      ASSERT_TRUE(matches(out, ref)) << file << " section at " << sec.first;
      sim::SimResult r = sim::simulate(p, t);
      EXPECT_GT(r.spill_bytes, 0);
      EXPECT_LE(r.spill_bytes, r.hbm_read_bytes + r.hbm_write_bytes);
    }
    EXPECT_GT(spilled, 0) << file;
  }
}

// Instruction fusion on numbers: candidates whose element-wise op and reduction run as one
// pass over the tile (mean(square(x)) as activation_reduce(func='square') then a divide of the
// [P, 1] sums) against the reference.
TEST(Functional, FusedPairsMatchTheReference) {
  const target::Target& t = target::builtin_target("trn1");
  ir::Module m = suite_module("axon/rmsnorm_matmul.py");
  const ir::Kernel& k = m.kernels.front();
  sem::DimEnv dims = small_dims(k);
  auto prepared = prepare(k, t, 2);
  lower::CandidateSpace space(prepared->pk.space_variants(), t, dims);
  auto inputs = sweep::check_inputs(k, dims, 5);
  auto ref = ir::evaluate(k, dims, inputs, ir::Precision::F64);
  int checked = 0;
  for (const auto& sec : space.sections()) {
    if (!sec.fused) continue;
    for (std::int64_t i = sec.first; i < sec.first + sec.size;
         i += std::max<std::int64_t>(1, sec.size / 16)) {
      if (!space.decode(i).instruction_fusion) continue;
      lower::Program p = space.materialize(i).value();
      ASSERT_TRUE(std::any_of(p.insts.begin(), p.insts.end(), [](const lower::Inst& in) {
        return in.spec->op.name == "activation_reduce";
      })) << space.describe(i);
      ++checked;
      ASSERT_TRUE(matches(sim::execute(p, inputs), ref))
          << "candidate " << i << " (" << space.describe(i) << ")";
    }
  }
  EXPECT_GT(checked, 0);
}

// Reduction fusion (reduction_fusion.h) on numbers: candidates of softmax-shaped kernels whose
// exp and row sum run as one activation_reduce (the sum riding on the exp) against the
// reference, every instruction (and each fused one on its carrier's engine) within the target's
// rules. Fails where no sampled candidate fuses (main before the pass).
struct FusedReductionCase {
  const char* file;
  const char* target;
};

class FusedReductions : public ::testing::TestWithParam<FusedReductionCase> {};

TEST_P(FusedReductions, MatchTheReference) {
  const FusedReductionCase& c = GetParam();
  const target::Target& t = target::builtin_target(c.target);
  ir::Module m = suite_module(c.file);
  const ir::Kernel& k = m.kernels.front();
  sem::DimEnv dims = small_dims(k);
  auto prepared = prepare(k, t, 2);
  lower::SpaceOptions so;
  so.max_block = 2;
  lower::CandidateSpace space(prepared->pk.space_variants(), t, dims, so);
  auto inputs = sweep::check_inputs(k, dims, 7);
  auto ref = ir::evaluate(k, dims, inputs, ir::Precision::F64);
  int fused = 0;
  const std::int64_t step = std::max<std::int64_t>(1, space.size() / 24);
  for (std::int64_t i = 0; i < space.size(); i += step) {
    lower::Lowered<lower::Program> lowered = space.materialize(i);
    if (!lowered || lower::riders(*lowered) == 0) continue;
    const lower::Program& p = *lowered;
    ++fused;
    EXPECT_TRUE(lower::legality_breaches(p, t.legality).empty()) << space.describe(i);
    auto mt = matches(sim::execute(p, inputs), ref);
    ASSERT_TRUE(mt) << "candidate " << i << ": " << mt.message() << "\n" << space.describe(i);
  }
  EXPECT_GT(fused, 0) << c.file << " on " << c.target << ": no sampled candidate fuses";
}

INSTANTIATE_TEST_SUITE_P(Kernels, FusedReductions,
                         ::testing::Values(FusedReductionCase{"axon/softmax.py", "trn2"},
                                           FusedReductionCase{"nkibench/bmm_softmax.py", "trn2"},
                                           FusedReductionCase{"axon/gqa.py", "trn1"},
                                           FusedReductionCase{"axon/softmax_matmul.py", "trn1"}),
                         [](const auto& info) {
                           std::string n = std::string(info.param.target) + "_" + info.param.file;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// Element-wise regions as one instruction (region.h) on numbers: silu's x / (1 + exp(-x)) as
// activation(silu), softmax's exp(x - max) as activation(exp) with bias -max (a [P, 1] negation
// first), candidates with the instruction fusion on, against the reference.
struct RegionCase {
  const char* file;
  const char* func;    // an activation function some instruction runs
  const char* region;  // the fused region's label in the candidate's description
};

class FusedRegions : public ::testing::TestWithParam<RegionCase> {};

TEST_P(FusedRegions, MatchTheReference) {
  const RegionCase& c = GetParam();
  const target::Target& t = target::builtin_target("trn1");
  ir::Module m = suite_module(c.file);
  const ir::Kernel& k = m.kernels.front();
  sem::DimEnv dims = small_dims(k);
  auto prepared = prepare(k, t, 2);
  lower::CandidateSpace space(prepared->pk.space_variants(), t, dims);
  auto inputs = sweep::check_inputs(k, dims, 7);
  auto ref = ir::evaluate(k, dims, inputs, ir::Precision::F64);
  int checked = 0;
  for (const auto& sec : space.sections()) {
    if (!sec.fused) continue;
    for (std::int64_t i = sec.first; i < sec.first + sec.size;
         i += std::max<std::int64_t>(1, sec.size / 16)) {
      if (!space.decode(i).instruction_fusion) continue;
      std::string what = space.describe(i);
      if (what.find(c.region) == std::string::npos) continue;
      lower::Program p = space.materialize(i).value();
      ASSERT_TRUE(std::any_of(p.insts.begin(), p.insts.end(), [&](const lower::Inst& in) {
        auto f = in.attrs.find("func");
        return f != in.attrs.end() && f->second == sem::AttrValue(std::string(c.func));
      })) << what;
      ++checked;
      ASSERT_TRUE(matches(sim::execute(p, inputs), ref))
          << "candidate " << i << " (" << what << ")";
    }
  }
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, FusedRegions,
    ::testing::Values(RegionCase{"nkibench/silu.py", "silu", "neg@2+exp@2+add@2+div@2:"},
                      RegionCase{"axon/softmax.py", "exp", "sub@2+exp@2:"}),
    [](const auto& info) { return std::filesystem::path(info.param.file).stem().string(); });

// In-place writes (GroupTiling::in_place) on numbers: candidates of every section with the
// choice forced on in every nest (the space offers it only where a nest fits deeper with it),
// at shapes of several row tiles per strip and strips, against the reference; some of each
// kernel's programs have an instruction writing a buffer it reads (a value of the nest, or an
// HBM operand's tile), and the simulator runs them.
struct InPlaceCase {
  const char* file;
  sem::DimEnv dims;
};

class InPlaceWrites : public ::testing::TestWithParam<InPlaceCase> {};

TEST_P(InPlaceWrites, MatchTheReference) {
  const InPlaceCase& c = GetParam();
  const target::Target& t = target::builtin_target("trn1");
  ir::Module m = suite_module(c.file);
  const ir::Kernel& k = m.kernels.front();
  auto prepared = prepare(k, t, 2);
  auto variants = prepared->pk.space_variants();
  lower::SpaceOptions so;
  so.max_block = 2;
  lower::CandidateSpace space(variants, t, c.dims, so);
  auto inputs = sweep::check_inputs(k, c.dims, 7);
  auto ref = ir::evaluate(k, c.dims, inputs, ir::Precision::F64);
  int in_place = 0, checked = 0;
  for (const auto& sec : space.sections())
    for (std::int64_t i = sec.first; i < sec.first + sec.size;
         i += std::max<std::int64_t>(1, sec.size / 12)) {
      lower::Candidate cand = space.decode(i);
      lower::ProgramPlan plan = space.plan(cand);
      for (auto& g : plan.tiling) g.in_place = true;
      auto lowered = lower::materialize(*variants[cand.variant].kernel, c.dims, t, plan);
      if (!lowered) continue;
      const lower::Program& p = *lowered;
      bool writes_over = std::any_of(p.insts.begin(), p.insts.end(), [](const lower::Inst& in) {
        return in.out >= 0 && std::count(in.in.begin(), in.in.end(), in.out) > 0;
      });
      in_place += writes_over ? 1 : 0;
      ++checked;
      ASSERT_TRUE(matches(sim::execute(p, inputs), ref))
          << "candidate " << i << " in place (" << space.describe(i) << ")";
      if (writes_over) {
        EXPECT_GT(sim::simulate(p, t).latency_ns, 0);
      }
    }
  EXPECT_GT(checked, 0);
  EXPECT_GT(in_place, 0) << "no candidate writes in place";
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, InPlaceWrites,
    ::testing::Values(
        InPlaceCase{"nkibench/matmul_add_rmsnorm.py", {{"M", 512}, {"K", 256}, {"N", 256}}},
        InPlaceCase{"axon/rmsnorm_matmul.py", {{"M", 512}, {"K", 256}, {"N", 128}}},
        InPlaceCase{"nkibench/add_rmsnorm_matmul.py", {{"M", 512}, {"K", 256}, {"N", 128}}},
        InPlaceCase{"nkibench/adamw.py", {{"M", 256}, {"N", 1024}}},
        InPlaceCase{"nkibench/silu.py", {{"M", 256}, {"N", 1024}}},
        InPlaceCase{"nkibench/bmm_softmax.py", {{"B", 2}, {"M", 256}, {"K", 64}, {"N", 256}}}),
    [](const auto& info) { return std::filesystem::path(info.param.file).stem().string(); });

// On-chip steps (GroupTiling::onchip_steps) on numbers: a slice stepping along the free axis
// loaded contiguously and read through a strided window. Every candidate of the space (small
// spaces) against the reference; the space offers the choice (some candidate's program reads a
// strided window), and where a slice's region would leave its tensor (x[:, 5::2] of an even
// width: the last region ends one column past it) the load falls back to the strided DMA.
struct StepsCase {
  const char* name;
  const char* source;  // a kernel file, or the kernel's text
  sem::DimEnv dims;
  bool strided;  // some candidate reads a strided window
};

class OnChipSteps : public ::testing::TestWithParam<StepsCase> {};

TEST_P(OnChipSteps, MatchTheReference) {
  const StepsCase& c = GetParam();
  const target::Target& t = target::builtin_target("trn1");
  std::string text = c.source;
  ir::Module m = text.ends_with(".py") ? suite_module(text)
                                       : ir::parse_module(text, "t.py", sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  auto prepared = prepare(k, t, 2);
  auto variants = prepared->pk.space_variants();
  lower::SpaceOptions so;
  so.max_block = 2;
  lower::CandidateSpace space(variants, t, c.dims, so);
  ASSERT_GT(space.size(), 0);
  auto inputs = sweep::check_inputs(k, c.dims, 7);
  auto ref = ir::evaluate(k, c.dims, inputs, ir::Precision::F64);
  int strided = 0, checked = 0;
  for (std::int64_t i = 0; i < space.size(); i += std::max<std::int64_t>(1, space.size() / 60)) {
    auto lowered = space.materialize(i);
    if (!lowered) continue;
    const lower::Program& p = *lowered;
    bool steps = std::any_of(p.insts.begin(), p.insts.end(), [](const lower::Inst& in) {
      return std::any_of(in.in_window.begin(), in.in_window.end(),
                         [](const lower::Window& w) { return w.step > 1; });
    });
    strided += steps ? 1 : 0;
    ++checked;
    ASSERT_TRUE(matches(sim::execute(p, inputs), ref))
        << "candidate " << i << " (" << space.describe(i) << ")";
    if (steps) {
      EXPECT_NE(space.describe(i).find(" steps"), std::string::npos) << space.describe(i);
    }
  }
  EXPECT_GT(checked, 0);
  if (c.strided)
    EXPECT_GT(strided, 0) << "no candidate reads a strided window";
  else
    EXPECT_EQ(strided, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, OnChipSteps,
    ::testing::Values(StepsCase{"maxpool", "axon/maxpool.py", {{"M", 512}, {"N", 1024}}, true},
                      StepsCase{"step3",
                                "def f(x: f32[256, 768]) -> f32[256, 256]:\n"
                                "    return x[:, 2::3] * 2.0 + x[:, 0::3]\n",
                                {},
                                true},
                      StepsCase{"rows_and_columns",
                                "def f(x: f32[512, 512], y: f32[256, 256]) -> f32[256, 256]:\n"
                                "    return x[1::2, 1::2] - y\n",
                                {},
                                true},
                      StepsCase{"past_the_end",
                                "def f(x: f32[256, 512]) -> f32[256, 170]:\n"
                                "    return exp(x[:, 4::3])\n",
                                {},
                                false}),
    [](const auto& info) { return std::string(info.param.name); });

// Partition folding (partition_fold.h) on numbers: the folded variants' candidates (every value
// [P, C] run as [P * f, C / f] on whole 128-lane tiles, inputs read and outputs stored through
// reshaped aliases of their tensors) against the reference, and their NKI declares the aliases
// with the documented `reshape` of an HBM tensor.
struct FoldedCase {
  const char* file;
  sem::DimEnv dims;
  std::int64_t factor;  // expected fold factor
};

class FoldedPartitions : public ::testing::TestWithParam<FoldedCase> {};

TEST_P(FoldedPartitions, MatchTheReference) {
  const FoldedCase& c = GetParam();
  const target::Target& t = target::builtin_target("trn1");
  ir::Module m = suite_module(c.file);
  const ir::Kernel& k = m.kernels.front();
  auto prepared = prepare(k, t, 2);
  auto given = static_cast<int>(prepared->pk.space_variants().size());
  lower::SpaceOptions so;
  so.max_block = 2;
  lower::CandidateSpace space(prepared->pk.space_variants(), t, c.dims, so);
  auto inputs = sweep::check_inputs(k, c.dims, 7);
  auto ref = ir::evaluate(k, c.dims, inputs, ir::Precision::F64);
  int checked = 0;
  for (const auto& sec : space.sections()) {
    if (sec.variant < given) continue;  // a given variant, not a folded one
    for (std::int64_t i = sec.first; i < sec.first + sec.size;
         i += std::max<std::int64_t>(1, sec.size / 8)) {
      lower::Lowered<lower::Program> p = space.materialize(i);
      if (!p) continue;
      std::int64_t rows = 0;
      for (const auto& b : p->buffers)
        if (b.alias >= 0) rows = std::max(rows, b.shape.front());
      EXPECT_EQ(rows, k.params.front().shape.front().evaluate(c.dims).value() * c.factor);
      ASSERT_TRUE(matches(sim::execute(*p, inputs), ref))
          << "candidate " << i << " (" << space.describe(i) << ")";
      if (checked++ == 0) {
        std::vector<std::string> names;
        for (const auto& param : k.params) names.push_back(param.name);
        EXPECT_NE(lower::emit_nki(*p, names).find(".reshape(("), std::string::npos);
      }
    }
  }
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, FoldedPartitions,
    ::testing::Values(FoldedCase{"nkibench/rope.py", {{"D", 128}, {"L", 512}}, 2},
                      FoldedCase{"nkibench/rope.py", {{"D", 64}, {"L", 256}}, 4},
                      FoldedCase{"nkibench/silu.py", {{"M", 32}, {"N", 256}}, 4},
                      // more rows than partitions, not a multiple of them (192 = 128 + 64)
                      FoldedCase{"nkibench/silu.py", {{"M", 192}, {"N", 32}}, 2}),
    [](const auto& info) {
      std::string s = std::filesystem::path(info.param.file).stem().string();
      for (const auto& [d, v] : info.param.dims) s += "_" + d + std::to_string(v);
      return s;
    });

// Loop-carried accumulation (issue 17; frame.h, reduces_batch): a reduction along the batch dim
// above the rows runs as a loop inside the strip loop, folding each slice into an on-chip running
// value stored once. Mamba's layout variant (permute.h: [C, S, M] computed as [S, C, M], C on
// the partitions) and kernels that reduce a batch dim themselves, at shapes of several strips,
// row tiles and slices: every section's candidates that use the carried form, against the
// reference (some fused, with nothing of [S, C, M] in HBM).
struct CarriedCase {
  const char* name;
  const char* source;  // "" for mamba (the suite's kernel)
  sem::DimEnv dims;
};

class CarriedReductions : public ::testing::TestWithParam<CarriedCase> {};

TEST_P(CarriedReductions, MatchTheReference) {
  const CarriedCase& c = GetParam();
  const target::Target& t = target::builtin_target("trn1");
  ir::Module m = std::string(c.source).empty()
                     ? suite_module("nkibench/mamba.py")
                     : ir::parse_module(c.source, "t.py", sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  auto prepared = prepare(k, t, 8);
  lower::SpaceOptions so;
  so.max_block = 2;
  lower::CandidateSpace space(prepared->pk.space_variants(), t, c.dims, so);
  auto inputs = sweep::check_inputs(k, c.dims, 7);
  auto ref = ir::evaluate(k, c.dims, inputs, ir::Precision::F64);
  int checked = 0, fused = 0;
  for (const auto& sec : space.sections()) {
    for (std::int64_t i = sec.first; i < sec.first + sec.size;
         i += std::max<std::int64_t>(1, sec.size / 6)) {
      lower::Lowered<lower::Program> p = space.materialize(i);
      if (!p) continue;
      // the running value's start: a memset of a buffer that is no constant tile
      bool carried = std::any_of(p->insts.begin(), p->insts.end(), [&](const lower::Inst& in) {
        return in.spec->op.name == "memset" &&
               !p->buffers[static_cast<std::size_t>(in.out)].constant;
      });
      if (!carried) continue;
      ++checked;
      fused += sec.fused;
      ASSERT_TRUE(matches(sim::execute(*p, inputs), ref))
          << "candidate " << i << " (" << space.describe(i) << ")";
    }
  }
  EXPECT_GT(checked, 0);
  EXPECT_GT(fused, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, CarriedReductions,
    ::testing::Values(CarriedCase{"mamba", "", {{"C", 256}, {"M", 32}, {"S", 4}}},
                      CarriedCase{"sum_over_s",
                                  "def f(x: f32[S, C, M], y: f32[S, 1, M]) -> f32[C, M]:\n"
                                  "    return sum(exp(x) * y, axis=0)\n",
                                  {{"S", 3}, {"C", 512}, {"M", 64}}},
                      CarriedCase{"max_keepdims_batched",
                                  "def f(x: f32[B, S, C, M]) -> f32[B, 1, C, M]:\n"
                                  "    return max(x * 2.0, axis=1, keepdims=True)\n",
                                  {{"B", 2}, {"S", 3}, {"C", 256}, {"M", 32}}}),
    [](const auto& info) { return std::string(info.param.name); });

// A value broadcast along the carried dim (d * u, [1, C, M] beside [S, C, M]: mamba's delta * u)
// joins the nest that carries the sum over S (fusion.cpp) and is computed once per strip, before
// the loop over S (group_nest.cpp): every sampled fused candidate matches the reference, and the
// product's instructions run S times fewer than the sum's step inside the loop. On main the
// product is a nest of its own, stored to HBM and loaded back per S.
TEST(HoistedBroadcasts, RunOncePerStripAndMatchTheReference) {
  const target::Target& t = target::builtin_target("trn1");
  ir::Module m = ir::parse_module(
      "def f(x: f32[S, C, M], d: f32[1, C, M], u: f32[1, C, M]) -> f32[C, M]:\n"
      "    return sum(x * (d * u), axis=0)\n",
      "t.py", sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  auto prepared = prepare(k, t, 8);
  sem::DimEnv dims = {{"S", 4}, {"C", 256}, {"M", 64}};
  lower::SpaceOptions so;
  so.max_block = 2;
  lower::CandidateSpace space(prepared->pk.space_variants(), t, dims, so);
  auto inputs = sweep::check_inputs(k, dims, 7);
  auto ref = ir::evaluate(k, dims, inputs, ir::Precision::F64);
  int hoisted = 0;
  for (const auto& sec : space.sections()) {
    if (!sec.fused) continue;
    for (std::int64_t i = sec.first; i < sec.first + sec.size;
         i += std::max<std::int64_t>(1, sec.size / 8)) {
      lower::Lowered<lower::Program> p = space.materialize(i);
      if (!p) continue;
      ASSERT_TRUE(matches(sim::execute(*p, inputs), ref))
          << "candidate " << i << " (" << space.describe(i) << ")";
      const ir::Kernel& vk = *prepared->pk.space_variants()[space.decode(i).variant].kernel;
      int product = -1, sum = -1;
      for (std::size_t n = 0; n < vk.nodes.size(); ++n) {
        if (vk.nodes[n].op == "mul" && vk.nodes[n].shape.front() == sem::Dim(1))
          product = static_cast<int>(n);
        if (vk.nodes[n].op == "sum") sum = static_cast<int>(n);
      }
      if (product < 0 || sum < 0) continue;  // a variant without the broadcast product
      std::vector<std::int64_t> runs = p->executions();
      std::int64_t product_runs = 0, sum_runs = 0;
      for (std::size_t j = 0; j < p->insts.size(); ++j) {
        if (p->insts[j].engine_node == product) product_runs = std::max(product_runs, runs[j]);
        if (p->insts[j].engine_node == sum) sum_runs = std::max(sum_runs, runs[j]);
      }
      ASSERT_GT(product_runs, 0) << space.describe(i);
      EXPECT_EQ(product_runs * dims["S"], sum_runs) << space.describe(i);
      ++hoisted;
    }
  }
  EXPECT_GT(hoisted, 0);
}

// exp(d) broadcast along S: hoisted like d * u; and a variant that sums a [1, C, M] value over its
// dim of 1 (sum(sum(x, axis=0) * exp(d), axis=0): the loop over that dim has one trip, nothing is
// hoisted). The first version walked past the top block looking for that loop and never
// returned; every sampled candidate of every variant now lowers and matches the reference.
TEST(HoistedBroadcasts, OneTripCarriedLoopHoistsNothing) {
  const target::Target& t = target::builtin_target("trn1");
  ir::Module m = ir::parse_module(
      "def f(x: f32[S, C, M], d: f32[1, C, M]) -> f32[C, M]:\n"
      "    return sum(x * exp(d), axis=0)\n",
      "t.py", sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  auto prepared = prepare(k, t, 8);
  sem::DimEnv dims = {{"S", 4}, {"C", 256}, {"M", 512}};
  lower::CandidateSpace space(prepared->pk.space_variants(), t, dims, {});
  auto inputs = sweep::check_inputs(k, dims, 7);
  auto ref = ir::evaluate(k, dims, inputs, ir::Precision::F64);
  int checked = 0;
  for (const auto& sec : space.sections())
    for (std::int64_t i = sec.first; i < sec.first + sec.size;
         i += std::max<std::int64_t>(1, sec.size / 4)) {
      lower::Lowered<lower::Program> p = space.materialize(i);
      if (!p) continue;
      ASSERT_TRUE(matches(sim::execute(*p, inputs), ref))
          << "candidate " << i << " (" << space.describe(i) << ")";
      ++checked;
    }
  EXPECT_GT(checked, 0);
}

// A matmul whose left operand is a transposed input, read as it lies as the stationary operand
// (no transpose instruction, no transposing DMA), on numbers at several K tiles and row tiles;
// the strip's operand loaded in one DMA per K tile, each [K tile, the strip's rows] (regression:
// one per row tile cut the DMA's runs to 128 elements, a third of the DMA rate in f32).
TEST(Functional, StationaryLhsMatchesTheReference) {
  const target::Target& t = target::builtin_target("trn1");
  ir::Module m = suite_module("nkibench/transpose_matmul.py");
  const ir::Kernel& k = m.kernels.front();
  sem::DimEnv dims = {{"K", 384}, {"M", 256}, {"N", 384}};
  auto prepared = prepare(k, t, 2);
  lower::SpaceOptions so;
  so.max_block = 2;
  lower::CandidateSpace space(prepared->pk.space_variants(), t, dims, so);
  auto inputs = sweep::check_inputs(k, dims, 13);
  auto ref = ir::evaluate(k, dims, inputs, ir::Precision::F64);
  int checked = 0;
  for (std::int64_t i = 0; i < space.size() && checked < 8; i += 3) {
    if (space.describe(i).find("(stationary load)") == std::string::npos) continue;
    lower::Program p = space.materialize(i).value();
    for (const auto& in : p.insts)
      ASSERT_EQ(in.spec->op.name.find("transpose"), std::string::npos) << space.describe(i);
    lower::Candidate c = space.decode(i);
    std::int64_t strip = c.tiling[0].pt * c.tiling[0].block, loads = 0;
    auto runs = p.executions();
    for (std::size_t j = 0; j < p.insts.size(); ++j) {
      const lower::Inst& in = p.insts[j];
      if (!in.dma || in.store || p.buffers[in.hbm.buffer].param != 0) continue;
      loads += runs[j];
      EXPECT_EQ(in.out_window.whole() ? p.buffers[in.out].shape.back() : in.out_window.width, strip)
          << space.describe(i);
    }
    EXPECT_EQ(loads, dims["M"] / strip * (dims["K"] / 128)) << space.describe(i);
    ++checked;
    ASSERT_TRUE(matches(sim::execute(p, inputs), ref))
        << "candidate " << i << " (" << space.describe(i) << ")";
  }
  EXPECT_GT(checked, 0);
}

// The second propagation round's programs (values computed transposed, no transpose left on
// them) on numbers, at shapes with several 128-column chunks and row tiles per strip: a spread
// of the candidates of the transposed sections, on both targets (trn2's x^T comes by
// dma_transpose).
class TransposedChains : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(TransposedChains, MatchTheReference) {
  auto [target, file] = GetParam();
  const target::Target& t = target::builtin_target(target);
  ir::Module m = suite_module(file);
  const ir::Kernel& k = m.kernels.front();
  sem::DimEnv dims = {{"M", 256}, {"K", 256}, {"N", 384}, {"R", 256}};
  auto prepared = prepare(k, t, 2);
  lower::SpaceOptions so;
  so.max_block = 2;
  lower::CandidateSpace space(prepared->pk.space_variants(), t, dims, so);
  auto inputs = sweep::check_inputs(k, dims, 11);
  auto ref = ir::evaluate(k, dims, inputs, ir::Precision::F64);
  int checked = 0;
  auto transposes = [](const lower::Program& p) {
    auto runs = p.executions();
    std::int64_t n = 0;
    for (std::size_t i = 0; i < p.insts.size(); ++i)
      if (p.insts[i].spec->op.name.find("transpose") != std::string::npos) n += runs[i];
    return n;
  };
  std::int64_t fused_transposes = -1;
  for (const auto& sec : space.sections()) {
    if (sec.fused && !sec.swapped && sec.variant == 0)
      fused_transposes = transposes(space.materialize(sec.first).value());
    if (!sec.swapped) continue;
    // The transposes left are x's, once per strip: fewer than the plain fused form's.
    EXPECT_LT(transposes(space.materialize(sec.first).value()), fused_transposes);
    for (std::int64_t i = sec.first; i < sec.first + sec.size;
         i += std::max<std::int64_t>(1, sec.size / 8)) {
      ++checked;
      ASSERT_TRUE(matches(sim::execute(space.materialize(i).value(), inputs), ref))
          << "candidate " << i << " (" << space.describe(i) << ")";
    }
  }
  EXPECT_GT(checked, 0) << "no transposed candidates";
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, TransposedChains,
    ::testing::Values(std::pair{"trn1", "axon/silu_mlp.py"}, std::pair{"trn2", "axon/silu_mlp.py"},
                      std::pair{"trn1", "axon/swiglu_mlp.py"},
                      std::pair{"trn2", "axon/swiglu_mlp.py"},
                      std::pair{"trn1", "nkibench/lora.py"}, std::pair{"trn2", "nkibench/lora.py"}),
    [](const auto& info) {
      std::string name = std::string(info.param.first) + "_" + info.param.second;
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

// A spread of the candidates of every section that set `dimension` in some nest (a tiling
// dimension that only moves work out of a loop), each against the reference; each executes no
// more instructions than the same candidate without it, and some execute fewer.
void lighter_twins_match(const char* target, const char* file, bool lower::GroupTiling::*dimension,
                         sem::DimEnv dims, bool saves = true) {
  const target::Target& t = target::builtin_target(target);
  ir::Module m = suite_module(file);
  const ir::Kernel& k = m.kernels.front();
  auto prepared = prepare(k, t, 2);
  lower::SpaceOptions so;
  so.max_block = 2;
  lower::CandidateSpace space(prepared->pk.space_variants(), t, dims, so);
  auto inputs = sweep::check_inputs(k, dims, 17);
  auto ref = ir::evaluate(k, dims, inputs, ir::Precision::F64);
  auto executed = [](const lower::Program& p) {
    auto runs = p.executions();
    return std::accumulate(runs.begin(), runs.end(), std::int64_t{0});
  };
  int checked = 0, fewer = 0;
  for (const auto& sec : space.sections())
    for (std::int64_t i = sec.first; i < sec.first + sec.size;
         i += std::max<std::int64_t>(1, sec.size / 6)) {
      lower::Candidate c = space.decode(i);
      if (std::none_of(c.tiling.begin(), c.tiling.end(),
                       [&](const auto& g) { return g.*dimension; }))
        continue;
      lower::Program p = space.materialize(c).value();
      ++checked;
      ASSERT_TRUE(matches(sim::execute(p, inputs), ref))
          << "candidate " << i << " (" << space.describe(i) << ")";
      lower::ProgramPlan plan = space.plan(c);
      for (auto& g : plan.tiling) g.*dimension = false;
      std::int64_t before = executed(space.materialize(c, plan).value());
      EXPECT_LE(executed(p), before) << space.describe(i);
      fewer += executed(p) < before;
    }
  EXPECT_GT(checked, 0) << "no candidates with the dimension set";
  if (saves) {
    EXPECT_GT(fewer, 0) << "no candidate saves an instruction";
  }
}

std::string case_name(const char* target, const char* file) {
  std::string name = std::string(target) + "_" + file;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

// A tiling dimension that only moves work out of a loop, on one suite kernel at a shape with
// several N tiles and row tiles per strip.
struct TwinCase {
  bool lower::GroupTiling::*dimension;
  const char* target;
  const char* file;
};

class LighterTwin : public ::testing::TestWithParam<TwinCase> {};

TEST_P(LighterTwin, MatchesTheReference) {
  const TwinCase& c = GetParam();
  lighter_twins_match(c.target, c.file, c.dimension,
                      {{"M", 256}, {"K", 256}, {"N", 384}, {"R", 128}, {"B", 2}});
}

std::string twin_name(const ::testing::TestParamInfo<TwinCase>& info) {
  return case_name(info.param.target, info.param.file);
}

// Loop-invariant hoisting (GroupTiling::hoist): x^T made once per strip, before the N loop, and
// read by every N tile; fewer instructions where the lowering makes x^T (a transpose, a
// transposing load) per N tile.
constexpr auto hoist = &lower::GroupTiling::hoist;
INSTANTIATE_TEST_SUITE_P(
    HoistedLhs, LighterTwin,
    ::testing::Values(TwinCase{hoist, "trn1", "nkibench/matmul.py"},
                      TwinCase{hoist, "trn2", "nkibench/matmul.py"},
                      TwinCase{hoist, "trn1", "nkibench/rmsnorm_matmul.py"},
                      TwinCase{hoist, "trn1", "nkibench/add_rmsnorm_matmul.py"},
                      TwinCase{hoist, "trn1", "nkibench/matmul_add_rmsnorm.py"},
                      TwinCase{hoist, "trn1", "nkibench/swiglu.py"},
                      TwinCase{hoist, "trn1", "nkibench/lora.py"},
                      TwinCase{hoist, "trn2", "nkibench/lora.py"}),
    twin_name);

// A hoisted x^T whose x comes from HBM (hoisted_lhs.cpp): per row tile, x loaded in runs of
// several K tiles, as few as reach the DMA rate of the whole row (trn1, f32: 8 of the 16 K tiles
// of K = 2048, 4 KiB per partition), each K tile's transpose reading its window of the run;
// regression: one [128, 128] load per (K tile, row tile), 512 B runs, a third of the DMA rate.
TEST(Functional, HoistedLhsLoadsRowRuns) {
  const target::Target& t = target::builtin_target("trn1");
  ir::Module m = suite_module("nkibench/matmul.py");
  const ir::Kernel& k = m.kernels.front();
  sem::DimEnv dims = {{"M", 256}, {"K", 2048}, {"N", 256}};
  auto prepared = prepare(k, t, 2);
  lower::SpaceOptions so;
  so.max_block = 2;
  lower::CandidateSpace space(prepared->pk.space_variants(), t, dims, so);
  auto inputs = sweep::check_inputs(k, dims, 19);
  auto ref = ir::evaluate(k, dims, inputs, ir::Precision::F64);
  int checked = 0;
  for (std::int64_t i = 0; i < space.size() && checked < 4; ++i) {
    lower::Candidate c = space.decode(i);
    if (!c.tiling[0].hoist || c.tiling[0].pt != 128) continue;
    lower::Program p = space.materialize(c).value();
    std::int64_t loads = 0;
    auto runs = p.executions();
    for (std::size_t j = 0; j < p.insts.size(); ++j) {
      const lower::Inst& in = p.insts[j];
      if (!in.dma || in.store || p.buffers[in.hbm.buffer].param != 0) continue;
      loads += runs[j];
      EXPECT_EQ(in.hbm.extent.back(), 1024) << space.describe(i);
    }
    EXPECT_EQ(loads, 256 / 128 * 2) << space.describe(i);
    ++checked;
    ASSERT_TRUE(matches(sim::execute(p, inputs), ref))
        << "candidate " << i << " (" << space.describe(i) << ")";
  }
  EXPECT_GT(checked, 0) << "no hoisted candidate";
}

// The w-stationary loop order (GroupTiling::resident): each matmul's right-hand side loaded whole
// before the strip loop (inside the batch loops: bmm's per batch) and read by every strip, once
// instead of once per strip.
constexpr auto resident = &lower::GroupTiling::resident;
INSTANTIATE_TEST_SUITE_P(ResidentRhs, LighterTwin,
                         ::testing::Values(TwinCase{resident, "trn1", "nkibench/matmul.py"},
                                           TwinCase{resident, "trn2", "nkibench/matmul.py"},
                                           TwinCase{resident, "trn1", "nkibench/bmm.py"},
                                           TwinCase{resident, "trn1",
                                                    "nkibench/matmul_add_rmsnorm.py"},
                                           TwinCase{resident, "trn1", "nkibench/swiglu.py"}),
                         twin_name);

// Panel loads (GroupTiling::panel): a swap site's matmuls computed transposed load their
// right-hand sides in [K tile, W] column panels (W = 512 of N = 1024: two panels of four chunks)
// and read each chunk's tile as a window of its panel, with fewer DMAs than one per chunk.
class PanelLoads : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(PanelLoads, MatchTheReference) {
  auto [target, file] = GetParam();
  lighter_twins_match(target, file, &lower::GroupTiling::panel,
                      {{"M", 256}, {"K", 256}, {"N", 1024}, {"R", 128}});
}

// In a matmul nest (one panel per N tile, every K tile's load ahead of the K loop): the same
// loads as one multi-buffered tile per (N tile, K tile), so no instruction is saved.
TEST(Functional, PanelLoadsInMatmulNestsMatchTheReference) {
  for (const char* file : {"nkibench/transpose_matmul.py", "nkibench/matmul.py"})
    lighter_twins_match("trn1", file, &lower::GroupTiling::panel,
                        {{"M", 256}, {"K", 256}, {"N", 384}}, false);
}

INSTANTIATE_TEST_SUITE_P(Kernels, PanelLoads,
                         ::testing::Values(std::pair{"trn1", "nkibench/swiglu.py"},
                                           std::pair{"trn2", "axon/swiglu_mlp.py"},
                                           std::pair{"trn1", "axon/silu_mlp.py"}),
                         [](const auto& info) {
                           return case_name(info.param.first, info.param.second);
                         });

// A copy out of PSUM in its Scalar form (psum_copy.h: activation(copy) where tensor_copy cannot
// run on Scalar) on numbers: a spread of the candidates of every section whose copies take their
// second engine, each against the reference, with every copy out of PSUM on Scalar, the program
// legal, and the same program rebind() makes from the twin with the copies on their first engine
// (tensor_copy on Vector).
void scalar_psum_copies_match(const char* target, const char* file, sem::DimEnv dims) {
  const target::Target& t = target::builtin_target(target);
  ir::Module m = suite_module(file);
  const ir::Kernel& k = m.kernels.front();
  auto prepared = prepare(k, t, 2);
  lower::SpaceOptions so;
  so.max_block = 2;
  lower::CandidateSpace space(prepared->pk.space_variants(), t, dims, so);
  auto inputs = sweep::check_inputs(k, dims, 19);
  auto ref = ir::evaluate(k, dims, inputs, ir::Precision::F64);
  auto scalar_copies = [](const lower::Program& p) {
    return std::count_if(p.insts.begin(), p.insts.end(), [&](const lower::Inst& in) {
      return in.spec == p.psum_copy_scalar && in.scalar_bias >= 0;
    });
  };
  int checked = 0;
  for (const auto& sec : space.sections())
    for (std::int64_t i = sec.first; i < sec.first + sec.size;
         i += std::max<std::int64_t>(1, sec.size / 3)) {
      lower::Candidate c = space.decode(i);
      if (!c.op_engines.empty()) continue;
      c.engines = lower::kScalarPsumCopies;  // the copies out of PSUM on Scalar
      lower::ProgramPlan plan = space.plan(c);
      lower::Lowered<lower::Program> built = space.materialize(c, plan);
      if (!built || scalar_copies(*built) == 0) continue;
      const lower::Program& p = *built;
      ++checked;
      for (const auto& in : p.insts) {
        if (in.scalar_bias >= 0) {
          EXPECT_EQ(in.engine, sem::Engine::Scalar) << space.describe(i);
        }
      }
      EXPECT_TRUE(lower::legality_breaches(p, t.legality).empty()) << space.describe(i);
      ASSERT_TRUE(matches(sim::execute(p, inputs), ref))
          << "candidate " << i << " (" << space.describe(i) << ")";
      lower::ProgramPlan vector = plan;
      for (auto& [node, pick] : vector.picks) pick.copy_engine = 0;
      lower::Program twin = space.materialize(c, vector).value();
      EXPECT_EQ(scalar_copies(twin), 0) << space.describe(i);
      lower::rebind(twin, plan);
      ASSERT_EQ(twin.insts.size(), p.insts.size());
      for (std::size_t j = 0; j < p.insts.size(); ++j) {
        EXPECT_EQ(twin.insts[j].spec, p.insts[j].spec) << "instruction " << j;
        EXPECT_EQ(twin.insts[j].engine, p.insts[j].engine) << "instruction " << j;
        EXPECT_EQ(twin.insts[j].in.size(), p.insts[j].in.size()) << "instruction " << j;
      }
    }
  EXPECT_GT(checked, 0) << "no candidate copies out of PSUM on Scalar";
}

class ScalarPsumCopies : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(ScalarPsumCopies, MatchTheReference) {
  auto [target, file] = GetParam();
  scalar_psum_copies_match(target, file, {{"M", 256}, {"K", 128}, {"N", 256}, {"B", 1}});
}

INSTANTIATE_TEST_SUITE_P(Kernels, ScalarPsumCopies,
                         ::testing::Values(std::pair{"trn1", "nkibench/matmul.py"},
                                           std::pair{"trn1", "nkibench/bmm_softmax.py"}),
                         [](const auto& info) {
                           return case_name(info.param.first, info.param.second);
                         });

// A spread of the candidates of every section of `file` at `dims` (at most `per_section` each)
// whose plan `pick` accepts, each run on numbers against the reference; `check` sees each
// candidate's plan and program.
template <class Pick, class Check>
int spread_matches(const char* target, const char* file, sem::DimEnv dims, Pick pick, Check check) {
  const target::Target& t = target::builtin_target(target);
  ir::Module m = suite_module(file);
  const ir::Kernel& k = m.kernels.front();
  auto prepared = prepare(k, t, 2);
  lower::SpaceOptions so;
  so.max_block = 2;
  lower::CandidateSpace space(prepared->pk.space_variants(), t, dims, so);
  auto inputs = sweep::check_inputs(k, dims, 17);
  auto ref = ir::evaluate(k, dims, inputs, ir::Precision::F64);
  int checked = 0;
  for (const auto& sec : space.sections())
    for (std::int64_t i = sec.first; i < sec.first + sec.size;
         i += std::max<std::int64_t>(1, sec.size / 3)) {
      lower::Candidate c = space.decode(i);
      if (!pick(c)) continue;
      lower::ProgramPlan plan = space.plan(c);
      lower::Program p = space.materialize(c, plan).value();
      ++checked;
      EXPECT_TRUE(matches(sim::execute(p, inputs), ref))
          << "candidate " << i << " (" << space.describe(i) << ")";
      check(space, c, plan, p);
    }
  return checked;
}

std::int64_t executed_stores(const lower::Program& p) {
  auto runs = p.executions();
  std::int64_t n = 0;
  for (std::size_t i = 0; i < p.insts.size(); ++i) n += p.insts[i].store ? runs[i] : 0;
  return n;
}

// Wide stores (GroupTiling::store) on numbers: a matmul result evacuated N tile by N tile into
// one SBUF tile and stored once per `store` columns. Each candidate that stores wider matches the
// reference and issues fewer store DMAs than its twin storing per N tile.
class WideStores : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(WideStores, MatchesTheReferenceWithFewerStores) {
  auto [target, file] = GetParam();
  int fewer = 0;
  auto wide = [](const lower::Candidate& c) {
    return std::any_of(c.tiling.begin(), c.tiling.end(), [](const auto& g) { return g.store; });
  };
  int checked = spread_matches(
      target, file, {{"M", 256}, {"K", 256}, {"N", 1024}, {"B", 2}, {"R", 128}}, wide,
      [&](const lower::CandidateSpace& space, const lower::Candidate& c, lower::ProgramPlan plan,
          const lower::Program& p) {
        for (auto& g : plan.tiling) g.store = 0;
        std::int64_t narrow = executed_stores(space.materialize(c, plan).value());
        EXPECT_LE(executed_stores(p), narrow);
        fewer += executed_stores(p) < narrow;
      });
  EXPECT_GT(checked, 0) << "no candidate stores wider";
  EXPECT_GT(fewer, 0) << "no candidate issues fewer stores";
}

INSTANTIATE_TEST_SUITE_P(Kernels, WideStores,
                         ::testing::Values(std::pair{"trn1", "nkibench/bmm.py"},
                                           std::pair{"trn2", "nkibench/matmul.py"}),
                         [](const auto& info) {
                           return case_name(info.param.first, info.param.second);
                         });

// Buffer reuse (ProgramPlan::reuse_buffers) on numbers: fused nests whose element-wise values
// die before later ones are made. Each fused candidate matches the reference and declares no
// more SBUF than with reuse off; some declare less.
class BufferReuse : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(BufferReuse, MatchesTheReferenceInLessSbuf) {
  auto [target, file] = GetParam();
  int less = 0;
  const std::int64_t bank = target::builtin_target(target).psum.bank_bytes;
  int checked = spread_matches(
      target, file, {{"M", 256}, {"K", 256}, {"N", 384}},
      [](const lower::Candidate& c) { return c.fused; },
      [&](const lower::CandidateSpace& space, const lower::Candidate& c, lower::ProgramPlan plan,
          const lower::Program& p) {
        plan.reuse_buffers = false;
        lower::Program apart = space.materialize(c, plan).value();
        std::int64_t with = lower::on_chip_use(p, bank).sbuf_bytes;
        std::int64_t without = lower::on_chip_use(apart, bank).sbuf_bytes;
        EXPECT_LE(with, without) << space.describe(space.sections()[c.section].first);
        less += with < without;
      });
  EXPECT_GT(checked, 0) << "no fused candidates";
  EXPECT_GT(less, 0) << "no candidate reuses a buffer";
}

INSTANTIATE_TEST_SUITE_P(Kernels, BufferReuse,
                         ::testing::Values(std::pair{"trn1", "nkibench/matmul_add_rmsnorm.py"},
                                           std::pair{"trn1", "nkibench/rmsnorm_matmul.py"}),
                         [](const auto& info) {
                           return case_name(info.param.first, info.param.second);
                         });

std::vector<std::string> suite_kernels() {
  std::vector<std::string> out;
  for (const char* suite : {"axon", "nkibench"})
    for (const auto& e :
         std::filesystem::directory_iterator(std::string(TS_SOURCE_DIR) + "/jobs/kernels/" + suite))
      if (e.path().extension() == ".py")
        out.push_back(std::string(suite) + "/" + e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

INSTANTIATE_TEST_SUITE_P(Suites, Functional, ::testing::ValuesIn(suite_kernels()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = 'X';
                           return n;
                         });

// Online attention (online_nest.cpp, issue 19): sampled candidates whose nest streams the key
// axis with the score matmul (q k^T) computed key tile by key tile in the nest, against the
// reference. (The quick row, a small attention kernel, is in online_split_test.cpp.)
struct OnlineAttentionCase {
  const char* file;
  sem::DimEnv dims;
};

class OnlineAttention : public ::testing::TestWithParam<OnlineAttentionCase> {};

TEST_P(OnlineAttention, MatchesTheReference) {
  const OnlineAttentionCase& c = GetParam();
  const target::Target& t = target::builtin_target("trn2");
  ir::Module m = suite_module(c.file);
  const ir::Kernel& k = m.kernels.front();
  auto prepared = prepare(k, t, 8);
  lower::CandidateSpace space(prepared->pk.space_variants(), t, c.dims);
  auto inputs = sweep::check_inputs(k, c.dims, 7);
  auto ref = ir::evaluate(k, c.dims, inputs, ir::Precision::F64);
  std::mt19937_64 rng(5);
  int checked = 0;
  for (int tries = 0; tries < 20000 && checked < 2; ++tries) {
    auto i = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(space.size()));
    lower::ProgramPlan plan = space.plan(space.decode(i));
    if (std::none_of(plan.tiling.begin(), plan.tiling.end(),
                     [](const lower::GroupTiling& g) { return g.online > 0; }))
      continue;
    lower::Lowered<lower::Program> program = space.materialize(i);
    if (!program) continue;
    ASSERT_TRUE(matches(sim::execute(*program, inputs), ref)) << space.describe(i);
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no online candidate of " << c.file;
}

// (NKIBench's gqa at B=1 N=1024, 16 heads of 1024 x 1024, takes over 30 min in the interpreter.)
INSTANTIATE_TEST_SUITE_P(
    Kernels, OnlineAttention,
    ::testing::Values(OnlineAttentionCase{"axon/gqa.py", {{"M", 128}, {"N", 1024}}}),
    [](const auto& info) { return std::filesystem::path(info.param.file).parent_path().string(); });

}  // namespace
}  // namespace ts

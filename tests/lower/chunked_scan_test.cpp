// Scans tiled along their axis (chunked_scan.h, scan_chunks.cpp): the start, prefix and peel
// lemmas proved by Z3 over unbounded dims, the chunk lemma they imply checked at literal lengths
// (and wrong chunkings and peels refused with a counterexample), which scans qualify, the chunk
// step's tile op and lowering, where chunked tilings are offered, and chunked programs on numbers
// against the reference.
#include "tilesweep/lower/chunked_scan.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "reference_check.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/graph_printer.h"
#include "tilesweep/ir/interpreter.h"
#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/sim/execute.h"
#include "tilesweep/sweep/check.h"
#include "tilesweep/sweep/prepare.h"
#include "tilesweep/verify/prove.h"

namespace ts::lower {
namespace {

ir::Module parse(const std::string& src) {
  return ir::parse_module(src, "t.py", sem::OpTable::builtin());
}

// ---- the lemmas ----

// The three lemmas over unbounded dims, each proved (the chunk lemma follows by induction).
TEST(ChunkLemmas, AreProvedOverUnboundedDims) {
  std::vector<ChunkLemma> lemmas = chunk_lemmas("scan", "scan_from");
  ASSERT_EQ(lemmas.size(), 3u);
  const char* names[] = {"start", "prefix", "peel"};
  for (std::size_t i = 0; i < lemmas.size(); ++i) {
    EXPECT_EQ(lemmas[i].name, names[i]);
    verify::Verdict v = verify::prove_equivalent(lemmas[i].whole, lemmas[i].split);
    EXPECT_TRUE(v.proved()) << lemmas[i].name << ": " << verify::verdict_name(v.kind) << " "
                            << v.reason;
  }
}

// What the induction concludes, checked directly at literal lengths: the chunked form equal to
// the whole row at every column of A + B (the verifier unrolls literal ranges).
struct Split {
  int a, b;
};

class ChunkInstance : public ::testing::TestWithParam<Split> {};

TEST_P(ChunkInstance, IsProvedAtEveryColumn) {
  auto [a, b] = GetParam();
  std::string sig = fmt::format(
      "(x0: f32[M, {0}], x1: f32[M, {0}], s: f32[M, 1]) -> f32[M, 1]:\n    w = ", a + b);
  std::string whole = "def whole" + sig + "scan_from(x0, x1, s)\n";
  std::string split = "def split" + sig +
                      fmt::format(
                          "concat((p, scan_from(x0[:, {0}:], x1[:, {0}:], p[:, {1}:{0}])), "
                          "axis=1)\n",
                          a, a - 1);
  split.insert(split.find("    w = "),
               fmt::format("    p = scan_from(x0[:, :{0}], x1[:, :{0}], s)\n", a));
  for (int c = 0; c < a + b; ++c) {
    std::string column = fmt::format("    return w[:, {}:{}]\n", c, c + 1);
    ir::Module m = parse(whole + column + split + column);
    verify::Verdict v = verify::prove_equivalent(m.kernel("whole"), m.kernel("split"));
    EXPECT_TRUE(v.proved()) << a << " + " << b << " column " << c << ": "
                            << verify::verdict_name(v.kind) << " " << v.reason;
  }
}

INSTANTIATE_TEST_SUITE_P(Splits, ChunkInstance,
                         ::testing::Values(Split{1, 1}, Split{1, 3}, Split{2, 2}, Split{3, 1},
                                           Split{3, 3}, Split{4, 2}),
                         [](const auto& info) {
                           return fmt::format("a{}_b{}", info.param.a, info.param.b);
                         });

// Wrong peels over unbounded rows: the second part started from s, or fed the wrong operand, or
// read one column off. Each is refused with a counterexample, so the peel lemma can fail.
struct BadPeel {
  const char* name;
  const char* split;  // the body of `split` (a, b: f32[M, N + 1], s: f32[M, 1])
};

class WrongPeel : public ::testing::TestWithParam<BadPeel> {};

TEST_P(WrongPeel, IsRefused) {
  std::string sig = "(a: f32[M, N + 1], b: f32[M, N + 1], s: f32[M, 1]) -> f32[M, 1]:\n";
  ir::Module m = parse("def whole" + sig + "    return scan_from(a, b, s)[:, N:N + 1]\n" +
                       "def split" + sig + GetParam().split);
  verify::Verdict v = verify::prove_equivalent(m.kernel("whole"), m.kernel("split"));
  EXPECT_EQ(v.kind, verify::VerdictKind::NotEquivalent) << verify::verdict_name(v.kind);
}

INSTANTIATE_TEST_SUITE_P(
    Peels, WrongPeel,
    ::testing::Values(BadPeel{"restart_at_s",
                              "    return scan_from(a[:, 1:], b[:, 1:], s)[:, N - 1:N]\n"},
                      BadPeel{"wrong_operand",
                              "    p = scan_from(a[:, :1], b[:, :1], s)\n"
                              "    return scan_from(a[:, 1:], a[:, 1:], p)[:, N - 1:N]\n"},
                      BadPeel{"state_unscaled",
                              "    p = b[:, :1] + s\n"
                              "    return scan_from(a[:, 1:], b[:, 1:], p)[:, N - 1:N]\n"}),
    [](const auto& info) { return std::string(info.param.name); });

// Wrong chunkings: the second chunk started from the first chunk's first column, or from zero,
// or from the first chunk's start. Each is refused with a counterexample (at column 3, in the
// second chunk).
struct Bad {
  const char* name;
  const char* split;  // the body of `split` (a, b: f32[M, 4], s: f32[M, 1]) defining w
};

class WrongChunking : public ::testing::TestWithParam<Bad> {};

TEST_P(WrongChunking, IsRefused) {
  std::string sig = "(a: f32[M, 4], b: f32[M, 4], s: f32[M, 1]) -> f32[M, 1]:\n";
  std::string column = "    return w[:, 3:4]\n";
  ir::Module m = parse("def whole" + sig + "    w = scan_from(a, b, s)\n" + column + "def split" +
                       sig + GetParam().split + column);
  verify::Verdict v = verify::prove_equivalent(m.kernel("whole"), m.kernel("split"));
  EXPECT_EQ(v.kind, verify::VerdictKind::NotEquivalent) << verify::verdict_name(v.kind);
}

INSTANTIATE_TEST_SUITE_P(
    Chunkings, WrongChunking,
    ::testing::Values(Bad{"first_column",
                          "    p = scan_from(a[:, :2], b[:, :2], s)\n"
                          "    w = concat((p, scan_from(a[:, 2:], b[:, 2:], p[:, :1])), axis=1)\n"},
                      Bad{"restart_at_zero",
                          "    p = scan_from(a[:, :2], b[:, :2], s)\n"
                          "    w = concat((p, scan_from(a[:, 2:], b[:, 2:], s * 0.0)), axis=1)\n"},
                      Bad{"restart_at_s",
                          "    p = scan_from(a[:, :2], b[:, :2], s)\n"
                          "    w = concat((p, scan_from(a[:, 2:], b[:, 2:], s)), axis=1)\n"}),
    [](const auto& info) { return std::string(info.param.name); });

// ---- which scans, their step ----

struct Qualify {
  const char* name;
  const char* source;  // the last op is the one asked about
  bool scan;
};

class FreeAxisScan : public ::testing::TestWithParam<Qualify> {};

TEST_P(FreeAxisScan, Qualifies) {
  ir::Module m = parse(GetParam().source);
  const ir::Kernel& k = m.kernels.front();
  EXPECT_EQ(free_axis_scan(k, k.outputs.front()), GetParam().scan);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, FreeAxisScan,
    ::testing::Values(
        Qualify{"scan_rows",
                "def f(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:\n    return scan(a, b, axis=1)\n",
                true},
        Qualify{"scan_batched",
                "def f(a: f32[S, C, M], b: f32[S, C, M]) -> f32[S, C, M]:\n"
                "    return scan(a, b, axis=2)\n",
                true},
        // along the partitions, or an op with no chunk op: not chunked
        Qualify{"scan_partitions",
                "def f(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:\n    return scan(a, b, axis=0)\n",
                false},
        Qualify{"cumsum", "def f(x: f32[M, N]) -> f32[M, N]:\n    return cumsum(x, axis=1)\n",
                false},
        Qualify{"sum",
                "def f(x: f32[M, N]) -> f32[M, 1]:\n    return sum(x, axis=1, keepdims=True)\n",
                false}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ChunkStep, TileOpAndLoweringAreTheScanFromAStart) {
  ir::Module m = parse(
      "def f(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:\n"
      "    return scan(a, b, axis=1)\n");
  const ir::Kernel& k = m.kernels.front();
  auto t = chunk_tile_op(k, k.outputs.front());
  ASSERT_TRUE(t);
  EXPECT_EQ(ir::kernel_signature(t->kernel),
            "scan_from(x0: f32[P, F], x1: f32[P, F], s: f32[P, 1]) -> f32[P, F]");
  std::vector<ChunkedScan> scans = chunked_scans(k);
  ASSERT_EQ(scans.size(), 1u);
  EXPECT_TRUE(scans[0].proved) << scans[0].why;
  EXPECT_EQ(scans[0].proofs.size(), 3u);  // start, prefix, peel
  SynthesisOptions one;
  one.max_depth = 1;
  SynthesisResult r = synthesize(t->kernel, target::builtin_target("trn1").isa, one);
  ASSERT_FALSE(r.lowerings.empty());
  EXPECT_NE(r.lowerings.front().text.find("tensor_tensor_scan_from"), std::string::npos)
      << r.lowerings.front().text;
}

// ---- tilings offered ----

struct Offer {
  const char* name;
  std::int64_t cols;
  bool chunkable, proved;
  std::vector<std::int64_t> frees;  // the chunk widths offered
};

class ChunkedTilings : public ::testing::TestWithParam<Offer> {};

TEST_P(ChunkedTilings, AreOfferedWhereProvedAndLonger) {
  const Offer& o = GetParam();
  ir::Module m = parse(
      "def f(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:\n"
      "    return scan(a, b, axis=1)\n");
  const ir::Kernel& k = m.kernels.front();
  int node = k.outputs.front();
  GroupExtent extent;
  extent.rows = 128;
  extent.cols = o.cols;
  extent.elementwise = false;
  extent.chunkable = o.chunkable;
  ChunkedScan scan;
  scan.node = node;
  scan.proved = o.proved;
  SynthesisResult step;
  step.lowerings.emplace_back();
  scan.step = &step;
  std::vector<GroupTiling> tilings(1);
  add_chunked_tilings(tilings, k, {node}, extent, {scan});
  std::vector<std::int64_t> frees;
  for (std::size_t i = 1; i < tilings.size(); ++i) frees.push_back(tilings[i].free);
  EXPECT_EQ(frees, o.frees);
}

INSTANTIATE_TEST_SUITE_P(
    Groups, ChunkedTilings,
    ::testing::Values(Offer{"mamba_row", 7168, true, true, {512, 1024}},
                      Offer{"power_of_two", 8192, true, true, {512, 1024, 2048, 4096}},
                      Offer{"one_chunk", 512, true, true, {}},
                      Offer{"odd_row", 100, true, true, {}},
                      Offer{"not_proved", 7168, true, false, {}},
                      Offer{"not_chunkable", 7168, false, true, {}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ChunkedTilings, MambaAtItsBenchmarkRowIsChunkable) {
  ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/nkibench/mamba.py",
                                 sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  int scan = -1;
  for (std::size_t i = 0; i < k.nodes.size(); ++i)
    if (free_axis_scan(k, static_cast<int>(i))) scan = static_cast<int>(i);
  ASSERT_GE(scan, 0);
  GroupExtent e = group_extent(k, {scan}, {{"C", 256}, {"M", 7168}, {"S", 16}});
  EXPECT_TRUE(e.chunkable);
  EXPECT_EQ(e.cols, 7168);
}

// ---- on numbers ----

using test::Prepared;

struct NumbersCase {
  std::string name, source;  // "" for mamba (the suite's kernel)
  sem::DimEnv dims;
  std::int64_t chunk;  // the chunk width forced on chunkable groups (small: the interpreter's
                       // scan is cubic in its row)
};

void PrintTo(const NumbersCase& c, std::ostream* os) { *os << c.name; }

class ChunkedScans : public ::testing::TestWithParam<NumbersCase> {};

// Candidates with their chunkable groups cut into chunks, run by the functional ISA interpreter
// against the reference (|out - ref| <= 1e-4 + 1e-4 |ref|).
TEST_P(ChunkedScans, MatchTheReference) {
  const NumbersCase& nc = GetParam();
  ir::Module m =
      nc.source.empty()
          ? ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/nkibench/mamba.py",
                            sem::OpTable::builtin())
          : parse(nc.source);
  const ir::Kernel& k = m.kernels.front();
  const target::Target& t = target::builtin_target("trn1");
  Prepared p(k, t, 8);
  CandidateSpace space(p.pk.space_variants(), t, nc.dims);
  auto inputs = sweep::check_inputs(k, nc.dims, 7);
  auto ref = ir::evaluate(k, nc.dims, inputs, ir::Precision::F64);
  int checked = 0;
  std::set<std::pair<int, bool>> seen;  // (variant, fused)
  for (std::int64_t i = 0; i < space.size() && checked < 8; ++i) {
    Candidate c = space.decode(i);
    if (!seen.insert({c.variant, c.fused}).second) continue;
    ProgramPlan plan = space.plan(c);
    const ir::Kernel& vk = *p.pk.space_variants()[c.variant].kernel;
    bool chunked = false;
    for (std::size_t g = 0; g < plan.groups.size(); ++g)
      if (group_extent(vk, plan.groups[g], nc.dims).chunkable) {
        plan.tiling[g].free = nc.chunk;
        plan.tiling[g].block = 1;
        chunked = true;
      }
    if (!chunked) continue;
    Lowered<Program> program = space.materialize(c, plan);
    ASSERT_TRUE(program) << space.describe(i) << ": " << program.no_program().reason;
    auto out = sim::execute(*program, inputs);
    ASSERT_TRUE(test::matches(out, ref)) << space.describe(i);
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no chunked candidate of " << nc.name;
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, ChunkedScans,
    ::testing::Values(NumbersCase{"scan",
                                  "def f(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:\n"
                                  "    return scan(a, b, axis=1)\n",
                                  {{"M", 128}, {"N", 24}},
                                  8},
                      NumbersCase{"mamba", "", {{"C", 256}, {"M", 32}, {"S", 4}}, 8}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ts::lower

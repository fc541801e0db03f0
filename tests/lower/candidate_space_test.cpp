// The candidate space's engine axis: one policy for the whole candidate, or a choice per op.
#include "tilesweep/lower/candidate_space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/target/target.h"

namespace ts::lower {
namespace {

std::string without_engines(std::string text) {
  for (const std::string mark : {" (alternate engines)"})
    for (auto at = text.find(mark); at != std::string::npos; at = text.find(mark))
      text.erase(at, mark.size());
  return text;
}

// A kernel of views alone (no op to lower: its output a broadcast, a reshape or a transpose of
// an input) has candidates that copy the input through, on every target. Regression: its space
// took the largest engine count of no op (dereferenced an empty list's end) and crashed.
TEST(CandidateSpace, KernelOfViewsAloneHasCandidates) {
  const char* sources[] = {
      "def f(x: f32[1, N], y: f32[M, N]) -> f32[M, N]:\n    return broadcast_to(x, (M, N))\n",
      "def f(x: f32[M, N]) -> f32[N, M]:\n    return x.T\n",
  };
  const sem::DimEnv dims{{"M", 256}, {"N", 512}};
  for (const char* src : sources)
    for (const char* name : {"trn1", "trn2"}) {
      const target::Target& t = target::builtin_target(name);
      ir::Module m = ir::parse_module(src, "t.py", sem::OpTable::builtin());
      const ir::Kernel& k = m.kernels.front();
      SynthesisCache cache;
      KernelChoices choices = instruction_choices(k, t.isa, cache);
      CandidateSpace space({{&k, &choices}}, t, dims);
      ASSERT_GT(space.size(), 0) << src;
      EXPECT_TRUE(space.materialize(0)) << src;
    }
}

// CandidateSpace::neighbours: each neighbour of a candidate is in its section and differs from it
// in exactly one choice (the engine policy, the depth, the cores, one op's lowering with its
// engine, instruction fusion, one fused group's tiling or the unfused tiling policy); the
// relation is symmetric and the list increasing. Over kernels with one and several groups, with
// instruction pairs, per-op engines and cores.
struct NeighbourCase {
  const char* file;
  const char* target;
  sem::DimEnv dims;
  bool per_op;
  int cores;
};

int choices_changed(const Candidate& a, const Candidate& b) {
  int n = (a.engines != b.engines) + (a.bufs != b.bufs) + (a.cores != b.cores) +
          (a.instruction_fusion != b.instruction_fusion);
  for (std::size_t j = 0; j < a.lowering.size(); ++j)
    n += a.lowering[j] != b.lowering[j] ||
         (j < a.op_engines.size() && a.op_engines[j] != b.op_engines[j]);
  auto depthless = [](GroupTiling t) {
    t.bufs = 0;
    return t;
  };
  if (a.fused) {
    for (std::size_t g = 0; g < a.tiling.size(); ++g)
      n += !(depthless(a.tiling[g]) == depthless(b.tiling[g]));
  } else {
    bool same = true;
    for (std::size_t g = 0; g < a.tiling.size(); ++g)
      same = same && depthless(a.tiling[g]) == depthless(b.tiling[g]);
    n += !same;
  }
  return n;
}

TEST(CandidateSpace, NeighboursDifferInOneChoice) {
  const NeighbourCase cases[] = {
      {"softmax.py", "trn2", {{"M", 256}, {"N", 512}}, false, 1},
      {"softmax.py", "trn2", {{"M", 256}, {"N", 512}}, true, 1},
      {"rmsnorm_matmul.py", "trn1", {{"M", 512}, {"K", 512}, {"N", 512}}, false, 2},
      {"swiglu_mlp.py", "trn1", {{"M", 256}, {"K", 256}, {"N", 256}}, false, 1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.file) + (c.per_op ? " per op" : ""));
    const target::Target& t = target::builtin_target(c.target);
    ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/axon/" + c.file,
                                   sem::OpTable::builtin());
    const ir::Kernel& k = m.kernels.front();
    SynthesisCache cache;
    KernelChoices choices = instruction_choices(k, t.isa, cache);
    SpaceOptions o;
    o.max_block = 2;
    o.engines_per_op = c.per_op;
    o.cores = c.cores;
    CandidateSpace space({{&k, &choices}}, t, c.dims, o);
    ASSERT_GT(space.size(), 1);
    for (std::int64_t i = 0; i < space.size(); i += std::max<std::int64_t>(1, space.size() / 97)) {
      const Candidate ci = space.decode(i);
      std::vector<std::int64_t> around = space.neighbours(i);
      EXPECT_FALSE(around.empty()) << i;
      EXPECT_TRUE(std::is_sorted(around.begin(), around.end())) << i;
      EXPECT_EQ(std::set<std::int64_t>(around.begin(), around.end()).size(), around.size()) << i;
      for (std::int64_t n : around) {
        ASSERT_GE(n, 0);
        ASSERT_LT(n, space.size());
        const Candidate cn = space.decode(n);
        EXPECT_EQ(cn.section, ci.section) << i << " " << n;
        EXPECT_EQ(choices_changed(ci, cn), 1) << i << " " << n;
        const std::vector<std::int64_t> back = space.neighbours(n);
        EXPECT_TRUE(std::binary_search(back.begin(), back.end(), i)) << i << " " << n;
      }
    }
  }
}

// Per op, the space holds more candidates than the policy's; two candidates that differ only in
// one op's engine digit build the same program but for the engines of that op's instructions,
// each on one of the engines its instruction allows. (An alternate engine that breaks the
// target's [legality] rules is replaced by a legal one, so some pairs build the same program;
// some pairs must differ.)
TEST(CandidateSpace, EngineChoicePerOp) {
  const target::Target& t = target::builtin_target("trn2");
  static const ir::Module m = ir::load_module(
      std::string(TS_SOURCE_DIR) + "/jobs/kernels/axon/softmax.py", sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  SynthesisCache cache;
  KernelChoices choices = instruction_choices(k, t.isa, cache);
  const sem::DimEnv dims{{"M", 256}, {"N", 512}};
  SpaceOptions per_op;
  per_op.engines_per_op = true;
  CandidateSpace policy({{&k, &choices}}, t, dims), space({{&k, &choices}}, t, dims, per_op);
  EXPECT_GT(space.size(), policy.size());
  std::map<std::string, std::int64_t>
      first_of;  // the candidate text without engines -> its first index
  int compared = 0, moved = 0;
  for (std::int64_t i = 0; i < space.size() && compared < 200; ++i) {
    Candidate c = space.decode(i);
    ASSERT_EQ(c.op_engines.size(), c.lowering.size());
    std::string text = space.describe(i);
    EXPECT_NE(text.find("engines=per-op"), std::string::npos) << text;
    bool alternate = std::find(c.op_engines.begin(), c.op_engines.end(), 1) != c.op_engines.end();
    EXPECT_EQ(text.find("(alternate engines)") != std::string::npos, alternate) << text;
    auto [it, fresh] = first_of.emplace(without_engines(text), i);
    if (fresh) continue;
    Program a = space.materialize(it->second).value(), b = space.materialize(i).value();
    ASSERT_EQ(a.insts.size(), b.insts.size()) << text;
    for (std::size_t n = 0; n < a.insts.size(); ++n) {
      EXPECT_EQ(a.insts[n].spec, b.insts[n].spec);
      if (a.insts[n].engine == b.insts[n].engine) continue;
      ++moved;
      const auto& allowed = b.insts[n].spec->engines;
      EXPECT_NE(std::find(allowed.begin(), allowed.end(), b.insts[n].engine), allowed.end());
    }
    ++compared;
  }
  EXPECT_GT(compared, 0);
  EXPECT_GT(moved, 0) << "no engine digit moves an instruction";
}

bool fits(const Program& p, const target::Target& t) {
  OnChipUse u = on_chip_use(p, t.psum.bank_bytes);
  return u.sbuf_bytes <= t.sbuf.usable_bytes_per_partition && u.psum_banks <= t.psum.banks;
}

struct TwinCase {
  const char* target;
  const char* file;
  sem::DimEnv dims;
};

class HoistedTwin : public ::testing::TestWithParam<TwinCase> {};

// A tiling's twin with x^T hoisted out of the N loop (GroupTiling::hoist) replaces it only where
// the twin fits at every multi-buffering depth the tiling fits at: a hoisted candidate that does
// not fit while its unhoisted form does has that form in the space too. Regression: the twins
// were compared at the shallowest depth only, and NKIBench gqa on trn1 lost its best candidate
// (block 2 at bufs 2, 38.4 ms; the best left was 48.3 ms) to a twin that fits at bufs 1 only.
TEST_P(HoistedTwin, KeepsTheFormThatFitsDeeper) {
  const TwinCase& tc = GetParam();
  const target::Target& t = target::builtin_target(tc.target);
  const ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/" + tc.file,
                                       sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  SynthesisCache cache;
  KernelChoices choices = instruction_choices(k, t.isa, cache);
  CandidateSpace space({{&k, &choices}}, t, tc.dims);
  std::set<std::string> texts;
  for (std::int64_t i = 0; i < space.size(); ++i) texts.insert(space.describe(i));
  int checked = 0;
  for (std::int64_t i = 0; i < space.size(); ++i) {
    Candidate c = space.decode(i);
    if (std::none_of(c.tiling.begin(), c.tiling.end(), [](const auto& g) { return g.hoist; }) ||
        fits(space.materialize(c).value(), t))
      continue;
    ProgramPlan plan = space.plan(c);
    for (auto& g : plan.tiling) g.hoist = false;
    if (!fits(space.materialize(c, plan).value(), t)) continue;
    ++checked;
    std::string text = space.describe(i);
    for (auto at = text.find(" hoist"); at != std::string::npos; at = text.find(" hoist"))
      text.erase(at, 6);
    EXPECT_TRUE(texts.count(text)) << "lost: " << text;
  }
  EXPECT_GT(checked, 0) << "no hoisted candidate that fits shallower only";
}

// x^T of a 1024-row strip at K = 3072 is 96 KiB per partition: one buffer fits trn1's SBUF, two
// do not.
INSTANTIATE_TEST_SUITE_P(Kernels, HoistedTwin,
                         ::testing::Values(TwinCase{"trn1",
                                                    "nkibench/matmul.py",
                                                    {{"M", 2048}, {"K", 3072}, {"N", 1024}}}),
                         [](const auto& info) {
                           std::string name =
                               std::string(info.param.target) + "_" + info.param.file;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

struct PanelCase {
  const char* target;
  const char* file;
  sem::DimEnv dims;
  bool all;  // every panel twin has its streamed tiling beside it (none replaced)
};

class PanelTwin : public ::testing::TestWithParam<PanelCase> {};

// A panel twin (GroupTiling::panel) loads its first panel before any matmul of it starts, so it
// replaces its streamed tiling only where the nest loads at least 4 panels. Regression: at one
// strip of one N tile the panel twin replaced every streamed tiling and trn1 matmul M=128,
// K=8192, N=128 searched at bufs <= 2 lost to the heuristic (116.55 us in a panel, 95.56 us
// streamed by K tile).
TEST_P(PanelTwin, ReplacesTheStreamedTilingOnlyPastFourPanels) {
  const PanelCase& tc = GetParam();
  const target::Target& t = target::builtin_target(tc.target);
  const ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/" + tc.file,
                                       sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  SynthesisCache cache;
  KernelChoices choices = instruction_choices(k, t.isa, cache);
  CandidateSpace space({{&k, &choices}}, t, tc.dims);
  std::set<std::string> panel, streamed;  // the candidates' texts without " panel"
  for (std::int64_t i = 0; i < space.size(); ++i) {
    std::string text = space.describe(i);
    auto at = text.find(" panel");
    if (at == std::string::npos) {
      streamed.insert(text);
    } else {
      panel.insert(text.erase(at, 6));
    }
  }
  int both = 0;
  for (const auto& text : panel) both += static_cast<int>(streamed.count(text));
  EXPECT_FALSE(panel.empty()) << "no panel twin";
  EXPECT_EQ(both == static_cast<int>(panel.size()), tc.all)
      << both << " of " << panel.size() << " panel twins beside theirs";
}

// One strip of one N tile: 1 panel, nothing replaced. 2048 rows in strips of up to 1024 and
// N = 1024 in tiles of up to 512: mostly 4 panels or more, replaced.
INSTANTIATE_TEST_SUITE_P(
    Kernels, PanelTwin,
    ::testing::Values(
        PanelCase{"trn1", "axon/matmul.py", {{"M", 128}, {"K", 8192}, {"N", 128}}, true},
        PanelCase{"trn1", "axon/matmul.py", {{"M", 2048}, {"K", 1024}, {"N", 1024}}, false}),
    [](const auto& info) {
      return std::string(info.param.target) + "_" + std::to_string(info.index);
    });

// At the largest dims a job accepts, a prime K (2^31 - 1: K tiles of one column) builds its
// space in seconds, and a hoisted x^T loads x in runs of the whole row (no smaller count of K
// tiles divides it). Regression: the run length was searched by trying every count up to the
// number of K tiles, 2^31 steps per materialization (sweep.run.sigterm_unit's prepare: 229 s).
TEST(CandidateSpace, HoistedRunsAtAPrimeCountOfKTiles) {
  const target::Target& t = target::builtin_target("trn1");
  const ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/axon/matmul.py",
                                       sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  SynthesisCache cache;
  KernelChoices choices = instruction_choices(k, t.isa, cache);
  const std::int64_t K = 2147483647;
  SpaceOptions options;
  options.max_block = 1;
  CandidateSpace space({{&k, &choices}}, t, {{"M", 128}, {"K", K}, {"N", 128}}, options);
  ASSERT_GT(space.size(), 0);
  Candidate c = space.decode(0);
  ProgramPlan plan = space.plan(c);
  plan.tiling[0].hoist = true;
  Program p = space.materialize(c, plan).value();
  int runs = 0;
  for (const Inst& in : p.insts)
    if (in.dma && !in.store && p.buffers[in.hbm.buffer].param == 0) {
      EXPECT_EQ(in.hbm.extent.back(), K);
      ++runs;
    }
  EXPECT_EQ(runs, 1);
}

struct InPlaceCase {
  const char* target;
  const char* file;
  sem::DimEnv dims;
  bool offered;
};

class InPlaceChoice : public ::testing::TestWithParam<InPlaceCase> {};

// In-place writes (GroupTiling::in_place) are a choice the space offers only where a nest has an
// element-wise op whose operand dies there and writing over it lets the nest fit deeper than
// without: each in-place candidate writes some buffer it reads and holds less SBUF than the same
// plan without the choice, and the space without the choice is no larger. Not offered: a
// kernel with no element-wise op, and a shape whose nests fit at every depth as they are.
TEST_P(InPlaceChoice, OfferedWhereItFitsDeeper) {
  const InPlaceCase& tc = GetParam();
  const target::Target& t = target::builtin_target(tc.target);
  const ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/" + tc.file,
                                       sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  SynthesisCache cache;
  KernelChoices choices = instruction_choices(k, t.isa, cache);
  SpaceOptions off;
  off.in_place = false;
  CandidateSpace space({{&k, &choices}}, t, tc.dims), without({{&k, &choices}}, t, tc.dims, off);
  EXPECT_GE(space.size(), without.size());
  int offered = 0;
  for (std::int64_t i = 0; i < space.size(); ++i) {
    Candidate c = space.decode(i);
    if (std::none_of(c.tiling.begin(), c.tiling.end(), [](const auto& g) { return g.in_place; }))
      continue;
    EXPECT_NE(space.describe(i).find(" inplace"), std::string::npos) << space.describe(i);
    if (++offered > 40) continue;  // the programs of a sample
    Program p = space.materialize(c).value();
    EXPECT_TRUE(std::any_of(p.insts.begin(), p.insts.end(), [](const Inst& in) {
      return in.out >= 0 && std::count(in.in.begin(), in.in.end(), in.out) > 0;
    })) << space.describe(i);
    ProgramPlan plan = space.plan(c);
    for (auto& g : plan.tiling) g.in_place = false;
    Program plain = space.materialize(c, plan).value();
    EXPECT_LT(on_chip_use(p, t.psum.bank_bytes).sbuf_bytes,
              on_chip_use(plain, t.psum.bank_bytes).sbuf_bytes)
        << space.describe(i);
  }
  EXPECT_EQ(offered > 0, tc.offered) << offered << " in-place candidates";
  if (!tc.offered) EXPECT_EQ(space.size(), without.size());
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, InPlaceChoice,
    ::testing::Values(
        // silu's [128, 8192] tiles: its values at 3 copies fit only when written in place.
        InPlaceCase{"trn1", "nkibench/silu.py", {{"M", 256}, {"N", 8192}}, true},
        InPlaceCase{"trn1", "nkibench/silu.py", {{"M", 256}, {"N", 1024}}, false},
        InPlaceCase{"trn1", "nkibench/matmul.py", {{"M", 512}, {"K", 512}, {"N", 512}}, false}),
    [](const auto& info) {
      std::string name = std::string(info.param.target) + "_" + info.param.file + "_" +
                         (info.param.offered ? "offered" : "not_offered");
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

struct GroupFitCase {
  const char* name;
  const char* target;
  const char* source;  // one kernel
  sem::DimEnv dims;
  bool fused, unfused;  // the form has candidates
  const char* refusal;  // in counts().unsupported ("": none)
};

class GroupsFitAlone : public ::testing::TestWithParam<GroupFitCase> {};

// Each group's tilings are judged by its own loop nest (the nests run one after another): a group
// whose first tiling does not fit refuses none of the other groups' tilings, and the candidates
// fit. A form left with no candidate says which group and why (counts().unsupported) instead of
// vanishing. Regression: each group was judged beside the other groups' first tilings, so where
// one group's first tiling (a whole row) did not fit, every tiling of the others was refused and
// the form had 0 candidates, no reason given (axon and NKIBench gqa on trn1 at 4K and 16K keys:
// variants 3, 5, 9 and 11, the scale on K^T in a nest of its own, had no fused form).
TEST_P(GroupsFitAlone, AFormWithoutCandidatesSaysWhy) {
  const GroupFitCase& tc = GetParam();
  const target::Target& t = target::builtin_target(tc.target);
  const ir::Module m = ir::parse_module(tc.source, "groups.py", sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  static SynthesisCache cache;  // the rows' tile ops are shared (thread-safe)
  KernelChoices choices = instruction_choices(k, t.isa, cache);
  SpaceOptions options;
  options.max_block = 2;
  options.bufs = {1, 2};
  CandidateSpace space({{&k, &choices}}, t, tc.dims, options);
  bool fused = false, unfused = false;
  for (const auto& s : space.sections()) (s.fused ? fused : unfused) = true;
  EXPECT_EQ(fused, tc.fused);
  EXPECT_EQ(unfused, tc.unfused);
  std::string refusals;
  for (const auto& u : space.counts().unsupported) refusals += u + "\n";
  if (*tc.refusal == 0)
    EXPECT_EQ(refusals, "");
  else
    EXPECT_NE(refusals.find(tc.refusal), std::string::npos) << refusals;
  // Every tiling of the space fits at the shallowest depth (each tiling once: its candidate
  // with the first lowerings and policy).
  int checked = 0;
  for (std::int64_t i = 0; i < space.size(); ++i) {
    Candidate c = space.decode(i);
    if (c.bufs != 1 || c.engines != 0 || c.instruction_fusion ||
        std::any_of(c.lowering.begin(), c.lowering.end(), [](int l) { return l != 0; }))
      continue;
    Lowered<Program> p = space.materialize(c);
    ASSERT_TRUE(p) << space.describe(i);
    EXPECT_TRUE(fits(*p, t)) << space.describe(i);
    ++checked;
  }
  EXPECT_EQ(checked > 0, tc.fused || tc.unfused);
}

// The scale on K^T in a nest of its own (gqa's variant 9 in two dims). Attention at 16,384 keys
// on trn1: the scores' first tiling holds whole rows (three of 64 KiB per partition; 176 KiB
// usable), its online tilings fit. The scaled scores' row maximum at 65,536 keys: the unfused
// form's maximum streams its row; the fused nest of the matmul and the maximum holds the whole
// row in every tiling (256 KiB), and says so.
INSTANTIATE_TEST_SUITE_P(
    Kernels, GroupsFitAlone,
    ::testing::Values(
        GroupFitCase{"attention_trn1",
                     "trn1",
                     "def f(q: f32[M, 128], k: f32[N, 128], v: f32[N, 128]) -> f32[M, 128]:\n"
                     "    s = matmul(q, transpose(k) / 2.0)\n"
                     "    e = exp(s - max(s, axis=1, keepdims=True))\n"
                     "    return matmul(e, v) / sum(e, axis=1, keepdims=True)\n",
                     {{"M", 128}, {"N", 16384}},
                     true,
                     true,
                     ""},
        GroupFitCase{"row_max_trn1",
                     "trn1",
                     "def f(q: f32[M, 128], k: f32[N, 128]) -> f32[M, 1]:\n"
                     "    s = matmul(q, transpose(k) / 2.0)\n"
                     "    return max(s, axis=1, keepdims=True)\n",
                     {{"M", 128}, {"N", 65536}},
                     false,
                     true,
                     "variant 0 (fused): group 1 (matmul@2, max@3): none of its"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ts::lower

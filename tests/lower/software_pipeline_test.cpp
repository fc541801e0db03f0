// Software-pipelined loops (software_pipeline.h, GroupTiling::pipeline): candidates with the
// choice forced on in every nest run on numbers against the reference at shapes whose pipelined
// loop has 1 trip (no such program), 2 trips (no steady state beyond one iteration) and many;
// the timing simulator overlaps the next iteration's matmul stage with this one's softmax and
// finishes earlier; the NKI emitter prints them.
#include "tilesweep/lower/software_pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "reference_check.h"
#include "tilesweep/base/error.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/lower/materialize.h"
#include "tilesweep/lower/nki.h"
#include "tilesweep/lower/program_printer.h"
#include "tilesweep/sim/execute.h"
#include "tilesweep/sim/simulate.h"
#include "tilesweep/sweep/check.h"

namespace ts {
namespace {

struct PipeCase {
  const char* file;
  sem::DimEnv dims;
  bool expect_pipelined;  // some candidate has a loop to pipeline (one with 2 trips or more)
  const char* target = "trn2";
};

class SoftwarePipeline : public ::testing::TestWithParam<PipeCase> {};

TEST_P(SoftwarePipeline, CandidatesMatchTheReference) {
  const PipeCase& c = GetParam();
  const target::Target& t = target::builtin_target(c.target);
  ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/" + c.file,
                                 sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  test::Prepared prepared(k, t, 1);
  auto variants = prepared.pk.space_variants();
  lower::SpaceOptions so;
  so.max_block = 2;
  lower::CandidateSpace space(variants, t, c.dims, so);
  auto inputs = sweep::check_inputs(k, c.dims, 7);
  auto ref = ir::evaluate(k, c.dims, inputs, ir::Precision::F64);
  int checked = 0, pipes = 0;
  for (const auto& sec : space.sections())
    for (std::int64_t i = sec.first; i < sec.first + sec.size;
         i += std::max<std::int64_t>(1, sec.size / 3)) {
      lower::ProgramPlan plan = space.plan(space.decode(i));
      for (auto& g : plan.tiling) g.pipeline = true;
      auto lowered = lower::materialize(*variants[space.decode(i).variant].kernel, c.dims, t, plan);
      ASSERT_TRUE(lowered) << space.describe(i) << ": " << lowered.no_program().reason;
      const lower::Program& p = *lowered;
      if (!lower::pipelined(p)) continue;  // no loop to pipeline: the program as it was
      ++pipes;
      ASSERT_TRUE(test::matches(sim::execute(p, inputs), ref))
          << "candidate " << i << " pipelined (" << space.describe(i) << ")\n"
          << lower::print_program(p);
      sim::SimResult r = sim::simulate(p, t);
      EXPECT_TRUE(!r.feasible || r.latency_ns > 0) << space.describe(i);
      ++checked;
    }
  EXPECT_EQ(pipes > 0, c.expect_pipelined);
  // The space offers the twin exactly where it has a program (and fits).
  bool offered = false;
  for (const auto& sec : space.sections())
    for (std::int64_t i = sec.first; i < sec.first + sec.size && !offered;
         i += std::max<std::int64_t>(1, sec.size / 200))
      offered = space.describe(i).find(" pipe") != std::string::npos;
  EXPECT_EQ(offered, c.expect_pipelined);
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, SoftwarePipeline,
    ::testing::Values(
        // One batch of one row tile: every loop has one trip, nothing to pipeline.
        PipeCase{"nkibench/bmm_softmax.py", {{"B", 1}, {"M", 128}, {"K", 64}, {"N", 256}}, false},
        // One query tile: the loop over the 16 heads is pipelined.
        PipeCase{"nkibench/gqa.py", {{"B", 1}, {"N", 128}}, true},
        // Two query tiles (strips of block 1 and 2: 2 trips or 1), several (M = 512).
        PipeCase{"nkibench/gqa.py", {{"B", 1}, {"N", 256}}, true},
        PipeCase{"nkibench/bmm_softmax.py", {{"B", 2}, {"M", 512}, {"K", 64}, {"N", 256}}, true},
        PipeCase{"axon/gqa.py", {{"M", 256}, {"N", 256}}, true},
        // trn1 (no DMA transpose): q^T on the PE, whose copy out of PSUM is the loop's first
        // evacuation; the split after the score matmuls, with the output tile's own buffer.
        PipeCase{"nkibench/gqa.py", {{"B", 1}, {"N", 256}}, true, "trn1"}),
    [](const auto& info) {
      std::string name = std::filesystem::path(info.param.file).stem().string();
      if (std::string(info.param.target) != "trn2") name += std::string("_") + info.param.target;
      for (const auto& [d, v] : info.param.dims) name += "_" + d + std::to_string(v);
      return name;
    });

// Every `pipe` candidate the space offers has a program, pipelined where its lowerings leave the
// nest the loop; the twin is offered only in fused forms and single-nest kernels (the unfused
// nests share one tiling digit, so a twin in one would be paired with the others' tilings).
// Regression: in bmm_softmax's unfused form the max nest got the matmul nest's twin, and in the
// fused form a `pipe` tiling with a DMA transpose had no loop to pipeline: both had no program
// ("no loop of the nest can be software-pipelined"), against the space's promise.
TEST(SoftwarePipeline, OfferedTwinsHavePrograms_bmm_softmax) {
  const target::Target& t = target::builtin_target("trn2");
  ir::Module m =
      ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/nkibench/bmm_softmax.py",
                      sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  test::Prepared prepared(k, t, 2);
  const sem::DimEnv dims{{"B", 2}, {"M", 128}, {"K", 64}, {"N", 1024}};
  lower::CandidateSpace space(prepared.pk.space_variants(), t, dims);
  std::vector<std::int64_t> pipes;
  for (std::int64_t i = 0; i < space.size(); ++i) {
    lower::Candidate c = space.decode(i);
    if (std::any_of(c.tiling.begin(), c.tiling.end(), [](const auto& g) { return g.pipeline; }))
      pipes.push_back(i);
  }
  ASSERT_FALSE(pipes.empty());
  for (std::size_t j = 0; j < pipes.size(); j += std::max<std::size_t>(1, pipes.size() / 60)) {
    auto program = space.materialize(pipes[j]);
    EXPECT_TRUE(program) << space.describe(pipes[j]) << ": " << program.no_program().reason;
  }
}

// Where the loop splits (pipeline_split): on trn1, which has no DMA transpose, gqa's hoisted
// tilings transpose q on the PE once per query tile, and that copy out of PSUM is the loop's first
// evacuation. The split after it hands over only q^T, which the score matmuls read on the Tensor
// engine: nothing overlaps (regression: that split was taken, or refused where buffer reuse gave
// the scaled q's tile and the output tile one buffer, and trn1's best was never pipelined). The
// split is after the score matmuls: a handed-over tile is read off the Tensor engine (the
// softmax), and the program matches the reference.
TEST(SoftwarePipelineSplit, Trn1HoistedGqaHandsTheScoresOver) {
  const target::Target& t = target::builtin_target("trn1");
  ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/nkibench/gqa.py",
                                 sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  const sem::DimEnv dims{{"B", 1}, {"N", 256}};
  test::Prepared prepared(k, t, 1);
  auto variants = prepared.pk.space_variants();
  lower::SpaceOptions so;
  so.max_block = 1;
  lower::CandidateSpace space(variants, t, dims, so);
  auto inputs = sweep::check_inputs(k, dims, 7);
  auto ref = ir::evaluate(k, dims, inputs, ir::Precision::F64);
  int hoisted = 0;
  for (std::int64_t i = 0; i < space.size() && hoisted < 4; ++i) {
    std::string what = space.describe(i);
    if (what.find(" hoist") == std::string::npos || what.find(" pipe") == std::string::npos ||
        what.find("nc_transpose_pe") == std::string::npos)
      continue;
    lower::Program p = space.materialize(i).value();
    if (!lower::pipelined(p)) continue;
    ++hoisted;
    bool off_tensor = std::any_of(p.insts.begin(), p.insts.end(), [](const lower::Inst& in) {
      return in.engine != sem::Engine::Tensor &&
             std::any_of(in.in_lag.begin(), in.in_lag.end(), [](int l) { return l > 0; });
    });
    EXPECT_TRUE(off_tensor) << what << "\n" << lower::print_program(p);
    EXPECT_TRUE(test::matches(sim::execute(p, inputs), ref)) << what;
  }
  EXPECT_GT(hoisted, 0) << "no hoisted tiling with q^T on the PE is pipelined";
}

// The instructions of items [begin, end) of block b, nested loops included.
void stage_insts(const lower::Program& p, int b, std::size_t begin, std::size_t end,
                 std::set<int>& out) {
  for (std::size_t i = begin; i < end; ++i) {
    const lower::Item& item = p.blocks[b].items[i];
    if (item.inst >= 0)
      out.insert(item.inst);
    else
      stage_insts(p, item.block, 0, p.blocks[item.block].items.size(), out);
  }
}

// Pipelining with the public API (the loop the candidate space picks, split where it splits):
// in the timeline the steady state's matmul of iteration i + 1 starts before the last
// instruction of iteration i's later stage ends, and the candidate finishes earlier than the
// same candidate unpipelined (gqa at 4 query tiles: the Tensor engine's score matmul no longer
// waits behind the previous tile's softmax and P.V).
TEST(SoftwarePipelineTiming, NextMatmulOverlapsThisSoftmax) {
  const target::Target& t = target::builtin_target("trn2");
  ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/nkibench/gqa.py",
                                 sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  sem::DimEnv dims{{"B", 1}, {"N", 512}};
  test::Prepared prepared(k, t, 1);
  auto variants = prepared.pk.space_variants();
  lower::SpaceOptions so;
  so.max_block = 1;
  so.pipeline = false;
  lower::CandidateSpace space(variants, t, dims, so);
  int faster = 0, compared = 0;
  for (std::int64_t i = 0; i < space.size(); i += std::max<std::int64_t>(1, space.size() / 8)) {
    lower::Program plain = space.materialize(i).value();
    std::optional<int> loop;
    for (const auto& item : plain.blocks[0].items)
      if (!loop && item.block >= 0) loop = lower::loop_to_pipeline(plain, item.block);
    if (!loop) continue;
    std::size_t split = *lower::pipeline_split(plain, *loop);
    lower::Program pipe = plain;
    ASSERT_EQ(lower::pipeline_loop(pipe, *loop, split), std::nullopt);
    lower::validate(pipe);
    std::set<int> a, b;
    stage_insts(pipe, *loop, 0, split, a);
    stage_insts(pipe, *loop, split, pipe.blocks[*loop].items.size(), b);
    sim::SimOptions o;
    o.trace = true;
    o.extrapolate = false;
    sim::SimResult before = sim::simulate(plain, t, o), after = sim::simulate(pipe, t, o);
    ++compared;
    if (after.latency_ns < before.latency_ns) ++faster;
    // Per steady-state iteration j: the first matmul of A (iteration j + 1) against the latest
    // end of B (iteration j).
    std::vector<double> a_start, b_end;
    std::map<int, int> seen;
    for (const auto& ev : after.trace) {
      int run = seen[ev.inst]++;
      if (a.count(ev.inst) && ev.engine == sem::Engine::Tensor) {
        if (static_cast<int>(a_start.size()) <= run) a_start.resize(run + 1, 1e300);
        a_start[run] = std::min(a_start[run], ev.start_ns);
      }
      if (b.count(ev.inst)) {
        if (static_cast<int>(b_end.size()) <= run) b_end.resize(run + 1, 0);
        b_end[run] = std::max(b_end[run], ev.end_ns);
      }
    }
    ASSERT_FALSE(a_start.empty()) << space.describe(i);
    bool overlap = false;
    for (std::size_t j = 0; j < std::min(a_start.size(), b_end.size()); ++j)
      overlap = overlap || a_start[j] < b_end[j];
    EXPECT_TRUE(overlap) << space.describe(i);
  }
  EXPECT_GT(compared, 0);
  EXPECT_GT(faster, 0) << "pipelining never lowered the latency in " << compared << " candidates";
}

// A loop that cannot be pipelined is left unchanged, with the reason.
TEST(SoftwarePipelineRefusal, SaysWhy) {
  const target::Target& t = target::builtin_target("trn2");
  ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/nkibench/gqa.py",
                                 sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  sem::DimEnv dims{{"B", 1}, {"N", 256}};
  test::Prepared prepared(k, t, 1);
  lower::SpaceOptions so;
  so.pipeline = false;
  lower::CandidateSpace space(prepared.pk.space_variants(), t, dims, so);
  lower::Program p = space.materialize(0).value();
  std::optional<int> loop;
  for (const auto& item : p.blocks[0].items)
    if (!loop && item.block >= 0) loop = lower::loop_to_pipeline(p, item.block);
  ASSERT_TRUE(loop);
  struct Case {
    int block;
    std::size_t split;
    const char* why;
  };
  int nest = p.blocks[*loop].parent;
  while (p.blocks[nest].parent > 0) nest = p.blocks[nest].parent;
  for (const Case& c : {Case{0, 1, "no such loop"}, Case{*loop, 0, "a stage is empty"},
                        Case{*loop, p.blocks[*loop].items.size(), "a stage is empty"},
                        Case{nest, 1, "not a loop inside another loop"}}) {
    lower::Program q = p;
    auto no = lower::pipeline_loop(q, c.block, c.split);
    if (c.why) {
      ASSERT_TRUE(no);
      EXPECT_EQ(*no, c.why);
    }
    if (no) {
      EXPECT_EQ(lower::print_program(q), lower::print_program(p));
    }
  }
}

// The NKI emitter prints pipelined candidates in both dialects: the handed-over tiles as arrays of
// copies rotated by the pipelined loop's variable (nki_test.cpp has the text; nki.numpy.pipe_*
// runs them on numbers).
TEST(SoftwarePipelineNki, EmittedInBothDialects) {
  const target::Target& t = target::builtin_target("trn2");
  ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/nkibench/gqa.py",
                                 sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  sem::DimEnv dims{{"B", 1}, {"N", 256}};
  test::Prepared prepared(k, t, 1);
  auto variants = prepared.pk.space_variants();
  lower::CandidateSpace space(variants, t, dims, lower::SpaceOptions{});
  for (std::int64_t i = 0; i < space.size(); i += std::max<std::int64_t>(1, space.size() / 400)) {
    if (space.describe(i).find(" pipe") == std::string::npos) continue;
    lower::Program p = space.materialize(i).value();
    if (!lower::pipelined(p)) continue;
    for (lower::NkiApi api : {lower::NkiApi::Current, lower::NkiApi::Legacy}) {
      std::string py = lower::emit_nki(p, std::vector<std::string>{"q", "k", "v"}, api);
      EXPECT_NE(py.find("(pipelined)"), std::string::npos) << py;
      EXPECT_NE(py.find(" + 1) % "), std::string::npos) << py;
    }
    return;
  }
  FAIL() << "no pipelined candidate";
}

}  // namespace
}  // namespace ts

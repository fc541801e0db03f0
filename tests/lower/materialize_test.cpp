// materialize() and the ProgramBuilder it builds through: errors as values a caller can catch
// (never a crash), and the builder's checks.
#include "tilesweep/lower/materialize.h"

#include <gtest/gtest.h>

#include <functional>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/fusion.h"
#include "tilesweep/lower/program_builder.h"

namespace ts::lower {
namespace {

// Regression: a node whose frame frame_of cannot give (a reduction along a batch axis) used to
// send the materializer's frame lookup into endless self-recursion (a stack overflow) when a plan
// put it in a group; it is Unsupported, as the lookup's comment said.
TEST(Materialize, NodeWithoutFrameIsUnsupported) {
  ir::Module m = ir::parse_module("def f(x: f32[B, M, N]) -> f32[M, N]:\n    return sum(x, axis=0)\n", "t.py",
                                  sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  int node = k.outputs.front();
  ASSERT_THROW(frame_of(k, node), Unsupported);
  ProgramPlan plan;
  plan.groups = {{node}};
  plan.tiling = {GroupTiling{}};
  sem::DimEnv dims{{"B", 4}, {"M", 256}, {"N", 512}};
  try {
    materialize(k, dims, sim::builtin_target("trn2"), plan);
    FAIL() << "no error";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("only the last (free) axis is tiled"), std::string::npos) << e.what();
  }
}

struct BuilderCase {
  const char* name;
  std::function<void(ProgramBuilder&)> build;
  bool valid;
};

void PrintTo(const BuilderCase& c, std::ostream* os) { *os << c.name; }

class ProgramBuilderCase : public ::testing::TestWithParam<BuilderCase> {};

TEST_P(ProgramBuilderCase, ChecksWhatItBuilds) {
  ProgramBuilder b("k");
  const BuilderCase& c = GetParam();
  if (!c.valid) {
    EXPECT_THROW({
      c.build(b);
      std::move(b).build();
    }, InternalError);
    return;
  }
  c.build(b);
  Program p = std::move(b).build();
  EXPECT_EQ(p.kernel, "k");
}

Buffer tile(sem::Memory m) {
  Buffer b;
  b.name = "t";
  b.memory = m;
  b.shape = {128, 64};
  return b;
}

const sem::InstrSpec* copy_spec() { return sim::builtin_target("trn2").isa.find("tensor_copy"); }

Inst copy(int from, int to) {
  Inst in;
  in.spec = copy_spec();
  in.engine = sem::Engine::Vector;
  in.in = {from};
  in.out = to;
  return in;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ProgramBuilderCase,
    ::testing::Values(
        BuilderCase{"copy_in_a_loop",
                    [](ProgramBuilder& b) {
                      int x = b.add_buffer(tile(sem::Memory::Sbuf)), y = b.add_buffer(tile(sem::Memory::Sbuf));
                      b.append(b.loop(0, "i", 4), copy(x, y));
                    },
                    true},
        BuilderCase{"made_then_placed_first",
                    [](ProgramBuilder& b) {
                      int x = b.add_buffer(tile(sem::Memory::Sbuf)), y = b.add_buffer(tile(sem::Memory::Sbuf));
                      b.append(0, copy(x, y));
                      Inst& in = b.new_inst();
                      in = copy(y, x);
                      EXPECT_EQ(b.place_first(0, in), 1);
                      EXPECT_EQ(b.program().blocks[0].items.front().inst, 1);
                    },
                    true},
        BuilderCase{"operand_out_of_range", [](ProgramBuilder& b) { b.append(0, copy(0, 1)); }, false},
        BuilderCase{"loop_in_a_missing_block", [](ProgramBuilder& b) { b.loop(3, "i", 2); }, false},
        BuilderCase{"instruction_in_a_missing_block",
                    [](ProgramBuilder& b) {
                      int x = b.add_buffer(tile(sem::Memory::Sbuf));
                      b.append(5, copy(x, x));
                    },
                    false},
        BuilderCase{"placed_after_another_was_made",
                    [](ProgramBuilder& b) {
                      int x = b.add_buffer(tile(sem::Memory::Sbuf));
                      b.program().insts.reserve(2);  // `first` stays where it is
                      Inst& first = b.new_inst();
                      first = copy(x, x);
                      b.new_inst() = copy(x, x);
                      b.place(0, first);
                    },
                    false}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ts::lower

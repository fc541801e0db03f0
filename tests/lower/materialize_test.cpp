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

// No program is a value: a reason and a node, no exception until value() asks for the program.
TEST(Lowered, NoProgramIsAValue) {
  Lowered<int> some = 3, none = NoProgram{"why", 7};
  EXPECT_TRUE(some);
  EXPECT_EQ(*some, 3);
  EXPECT_EQ(some.value(), 3);
  EXPECT_FALSE(none);
  EXPECT_EQ(none.no_program().reason, "why");
  EXPECT_EQ(none.no_program().node, 7);
  try {
    none.value();
    FAIL() << "no exception";
  } catch (const Unsupported& e) {
    EXPECT_STREQ(e.what(), "why");
    EXPECT_EQ(e.node, 7);
  }
}

// Every reason materialize gives for a kernel without a program, as a value (table-driven).
TEST(Materialize, ReasonsAreValues) {
  struct Case {
    const char* source;
    const char* reason;
  };
  const Case cases[] = {
      {"def f(x: f32[M, N]) -> f32[N, M]:\n    return exp(reshape(transpose(x), (N, M)))\n",
       "reshape of a strided or transposed view"},
      {"def f(x: f32[M, N]) -> f32[M, N]:\n    return exp(repeat(x, 3, axis=0)[: 2 * M : 2, :])\n",
       "a slice stepping 2 along a dim repeated 3 times has no DMA access pattern (the step must "
       "be 1 or a multiple of the repeat count)"},
      // an output copied through its view needs one: a reshape of a strided slice that another
      // op reads has none
      {"def f(x: f32[M, N]):\n    r = reshape(exp(x)[:, : N // 2], (M, 2, N // 4))\n"
       "    return r, exp(r)\n",
       "reshape of a strided or transposed view"},
      {"def f(x: f32[M, N]):\n    return broadcast_to(2.0, (M, N)), exp(x)\n",
       "output 0 is a 'broadcast_to', not a computed value"},
      {"def f(x: f32[M, N]) -> f32[M, N]:\n    return x\n",
       "output 0 is a 'input', not a computed value"},
      {"def f(x: f32[M, N]) -> f32[M, N]:\n    return exp(x)\n",
       "'exp' has no instruction lowering"},
  };
  sem::DimEnv dims{{"M", 256}, {"N", 512}};
  for (const Case& c : cases) {
    ir::Module m = ir::parse_module(c.source, "t.py", sem::OpTable::builtin());
    const ir::Kernel& k = m.kernels.front();
    ProgramPlan plan;
    plan.groups = fusion_groups(k, false).value();
    plan.tiling.assign(plan.groups.size(), GroupTiling{});
    for (const auto& g : plan.groups)
      for (int node : g)
        plan.picks[node] = OpPick{};  // no lowering: each case fails before one is needed
    Lowered<Program> p = materialize(k, dims, target::builtin_target("trn2"), plan);
    ASSERT_FALSE(p) << c.source;
    EXPECT_EQ(p.no_program().reason, c.reason) << c.source;
  }
}

// Regression: a node whose frame frame_of cannot give (a reduction along a batch axis) used to
// send the materializer's frame lookup into endless self-recursion (a stack overflow) when a plan
// put it in a group; it has no program, and the reason says why.
TEST(Materialize, NodeWithoutFrameIsUnsupported) {
  ir::Module m =
      // (along the batch dim above the rows it is placed: a carried reduction, frame.h; along an
      // outer batch dim it is not)
      ir::parse_module("def f(x: f32[A, B, M, N]) -> f32[B, M, N]:\n    return sum(x, axis=0)\n",
                       "t.py", sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  int node = k.outputs.front();
  ASSERT_FALSE(find_frame(k, node));
  ASSERT_THROW(frame_of(k, node), Unsupported);
  ProgramPlan plan;
  plan.groups = {{node}};
  plan.tiling = {GroupTiling{}};
  sem::DimEnv dims{{"A", 2}, {"B", 4}, {"M", 256}, {"N", 512}};
  Lowered<Program> p = materialize(k, dims, target::builtin_target("trn2"), plan);
  ASSERT_FALSE(p) << "a program";
  EXPECT_NE(p.no_program().reason.find("only the last (free) axis is tiled"), std::string::npos)
      << p.no_program().reason;
  EXPECT_THROW(p.value(), Unsupported);
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
    EXPECT_THROW(
        {
          c.build(b);
          std::move(b).build();
        },
        InternalError);
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

const sem::InstrSpec* copy_spec() { return target::builtin_target("trn2").isa.find("tensor_copy"); }

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
    ::testing::Values(BuilderCase{"copy_in_a_loop",
                                  [](ProgramBuilder& b) {
                                    int x = b.add_buffer(tile(sem::Memory::Sbuf)),
                                        y = b.add_buffer(tile(sem::Memory::Sbuf));
                                    b.append(b.loop(0, "i", 4), copy(x, y));
                                  },
                                  true},
                      BuilderCase{"made_then_placed_first",
                                  [](ProgramBuilder& b) {
                                    int x = b.add_buffer(tile(sem::Memory::Sbuf)),
                                        y = b.add_buffer(tile(sem::Memory::Sbuf));
                                    b.append(0, copy(x, y));
                                    Inst& in = b.new_inst();
                                    in = copy(y, x);
                                    EXPECT_EQ(b.place_first(0, in), 1);
                                    EXPECT_EQ(b.program().blocks[0].items.front().inst, 1);
                                  },
                                  true},
                      BuilderCase{"operand_out_of_range",
                                  [](ProgramBuilder& b) { b.append(0, copy(0, 1)); }, false},
                      BuilderCase{"loop_in_a_missing_block",
                                  [](ProgramBuilder& b) { b.loop(3, "i", 2); }, false},
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

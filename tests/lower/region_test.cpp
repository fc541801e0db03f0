// Activation folding (region.h, issue 17): element-wise regions found, each synthesized as one
// instruction where the ISA has one (fused functions from their element-wise definitions,
// constant scales and shifts folded into activation's scale/bias), every lowering proved; and a
// matmul's left operand that is a transposed view read as the stationary operand.
#include "tilesweep/lower/region.h"

#include <gtest/gtest.h>

#include <string>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/graph_printer.h"
#include "tilesweep/lower/instruction_choices.h"
#include "tilesweep/target/target.h"

namespace ts::lower {
namespace {

ir::Kernel parse(const std::string& source) {
  return ir::parse_module(source, "t.py", sem::OpTable::builtin()).kernels.front();
}

// The ops' own lowerings at depth 1 (fast); regions and stationary uses search depth 1 anyway.
SynthesisOptions depth_one() {
  SynthesisOptions o;
  o.max_depth = 1;
  return o;
}

struct FoldCase {
  const char* name;
  const char* source;
  const char* target;
  const char* lowering;  // the one instruction of the largest region ("" when none)
  const char* label;     // the chosen region's ops
  int depth = 1;         // instructions of that lowering (2: a per-row value transformed first)
};

// exp(x - m) for a per-row m: the bias -m = 0 - m from one [P, 1] subtraction, then the
// activation.
constexpr const char* kRowShift =
    "activation(x, tensor_tensor(broadcast_to(0, shape=(P, 1)), y, op='sub'), func='exp', "
    "scale=1)";

class FoldRegion : public ::testing::TestWithParam<FoldCase> {};

TEST_P(FoldRegion, FindsOneProvedInstruction) {
  const FoldCase& c = GetParam();
  ir::Kernel k = parse(c.source);
  const sem::InstrTable& isa = target::builtin_target(c.target).isa;
  SynthesisCache cache;
  KernelChoices kc = instruction_choices(k, isa, cache, depth_one());
  const PairChoice* region = nullptr;
  for (const auto& p : kc.pairs)
    if (!p.absorbed.empty()) region = &p;
  if (std::string(c.lowering).empty()) {
    EXPECT_EQ(region, nullptr) << region->label;
    return;
  }
  ASSERT_NE(region, nullptr);
  EXPECT_EQ(region->label, c.label);
  std::vector<std::string> texts;
  for (const auto& l : region->synthesis->lowerings) {
    EXPECT_TRUE(l.proof.proved()) << l.text;
    EXPECT_EQ(l.depth, c.depth) << l.text;
    texts.push_back(l.text);
  }
  EXPECT_NE(std::find(texts.begin(), texts.end(), c.lowering), texts.end())
      << ::testing::PrintToString(texts);
}

INSTANTIATE_TEST_SUITE_P(
    Regions, FoldRegion,
    ::testing::Values(
        FoldCase{"silu", "def f(x: f32[M, N]) -> f32[M, N]:\n    return x / (1 + exp(-x))\n",
                 "trn1", "activation(x, broadcast_to(0, shape=(P, 1)), func='silu', scale=1)",
                 "neg@2+exp@2+add@2+div@2"},
        FoldCase{"sigmoid", "def f(x: f32[M, N]) -> f32[M, N]:\n    return 1 / (1 + exp(-x))\n",
                 "trn2", "activation(x, broadcast_to(0, shape=(P, 1)), func='sigmoid', scale=1)",
                 "neg@2+exp@2+add@2+div@2"},
        FoldCase{"scale", "def f(x: f32[M, N]) -> f32[M, N]:\n    return exp(x * 0.5)\n", "trn1",
                 "activation(x, broadcast_to(0, shape=(P, 1)), func='exp', scale=0.5)",
                 "mul@2+exp@2"},
        FoldCase{"scale_and_shift",
                 "def f(x: f32[M, N]) -> f32[M, N]:\n    return sqrt(x * 1000.0 + 2.0)\n", "trn1",
                 "activation(x, broadcast_to(2, shape=(P, 1)), func='sqrt', scale=1000)",
                 "mul@2+add@2+sqrt@2"},
        FoldCase{"per_partition_bias",
                 "def f(x: f32[M, N], b: f32[M, 1]) -> f32[M, N]:\n    return exp(x + b)\n", "trn1",
                 "activation(x, y, func='exp', scale=1)", "add@2+exp@2"},
        // Softmax's shift: exp(x - m) is one activation whose bias is -m, the negation a [P, 1]
        // instruction before it (the row max, a reduction, stays outside the region).
        FoldCase{"per_partition_shift",
                 "def f(x: f32[M, N], m: f32[M, 1]) -> f32[M, N]:\n    return exp(x - m)\n", "trn1",
                 kRowShift, "sub@2+exp@2", 2},
        FoldCase{"softmax_numerator",
                 "def f(x: f32[M, N]) -> f32[M, N]:\n"
                 "    return exp(x - max(x, axis=1, keepdims=True))\n",
                 "trn2", kRowShift, "sub@2+exp@2", 2},
        FoldCase{"two_full_inputs",
                 "def f(x: f32[M, N], y: f32[M, N]) -> f32[M, N]:\n    return exp(x + y)\n", "trn1",
                 "", ""}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Region, IntermediatesReadOutsideStayOut) {
  // e = exp(x) is an output too: it cannot be absorbed into a region.
  ir::Kernel k = parse(
      "def f(x: f32[M, N]):\n    e = exp(x)\n"
      "    return e, e * 2.0\n");
  for (const auto& r : region_candidates(k, 2))
    for (int m : r.members) EXPECT_NE(k.nodes[m].op, "exp");
}

TEST(Region, OperandsAreTheValuesReadFromOutside) {
  ir::Kernel k =
      parse("def f(x: f32[M, N], b: f32[M, 1]) -> f32[M, N]:\n    return exp(x * 3.0 + b)\n");
  auto rs = region_candidates(k, 2);
  ASSERT_FALSE(rs.empty());
  const RegionCandidate& all = rs.back();  // the largest: mul, add, exp
  EXPECT_EQ(all.members.size(), 2u);
  ASSERT_EQ(all.operands.size(), 2u);
  EXPECT_EQ(all.op.kernel.params[0].shape.size(), 2u);
  EXPECT_EQ(all.op.kernel.params[1].shape[1].str(), "1");  // b: one value per partition
}

// The bound on a region's whole-tile operands comes from the ISA: the bundled ones read at most
// two [P, F] tiles per instruction, so a region reading three (x + y + z under exp) is left out
// at that bound and kept at a larger one.
TEST(Region, TileBoundComesFromTheIsa) {
  for (const char* t : {"trn1", "trn2", "trn3"})
    EXPECT_EQ(max_tile_operands(target::builtin_target(t).isa), 2) << t;
  ir::Kernel k = parse(
      "def f(x: f32[M, N], y: f32[M, N], z: f32[M, N]) -> f32[M, N]:\n"
      "    return exp(x + y + z)\n");
  auto reads_three = [](const std::vector<RegionCandidate>& rs) {
    for (const auto& r : rs)
      if (r.operands.size() == 3) return true;
    return false;
  };
  EXPECT_FALSE(reads_three(region_candidates(k, 2)));
  EXPECT_TRUE(reads_three(region_candidates(k, 3)));
}

TEST(Stationary, ATransposedInputIsTheStationaryOperand) {
  ir::Kernel k =
      parse("def f(a: f32[K, M], b: f32[K, N]) -> f32[M, N]:\n    return transpose(a) @ b\n");
  int mm = k.outputs[0];
  EXPECT_TRUE(stationary_lhs(k, mm));
  SynthesisCache cache;
  KernelChoices kc = instruction_choices(k, target::builtin_target("trn1").isa, cache, depth_one());
  ASSERT_EQ(kc.ops.size(), 1u);
  ASSERT_NE(kc.ops[0].stationary, nullptr);
  EXPECT_EQ(kc.ops[0].stationary->lowerings.front().text, "nc_matmul(x, y)");
  EXPECT_TRUE(kc.ops[0].stationary->lowerings.front().proof.proved());
  ir::Kernel plain = parse("def f(a: f32[M, K], b: f32[K, N]) -> f32[M, N]:\n    return a @ b\n");
  EXPECT_FALSE(stationary_lhs(plain, plain.outputs[0]));
}

}  // namespace
}  // namespace ts::lower

#include "tilesweep/lower/synthesize.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tilesweep/base/source.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/graph_printer.h"
#include "tilesweep/lower/instruction_choices.h"

namespace ts::lower {
namespace {

const sem::InstrTable& isa() {
  static const sem::InstrTable t = [] {
    sem::InstrTable t;
    std::string path =
        (std::filesystem::path(TS_SOURCE_DIR) / "tests" / "lower" / "test_isa.toml").string();
    t.load(read_text_file(path), path, sem::OpTable::builtin());
    return t;
  }();
  return t;
}

std::vector<std::string> lowerings(const std::string& src) {
  static std::vector<ir::Module> keep;
  keep.push_back(ir::parse_module(src, "op.py", sem::OpTable::builtin()));
  SynthesisResult r = synthesize(keep.back().kernels[0], isa());
  std::vector<std::string> out;
  for (const auto& l : r.lowerings) {
    EXPECT_TRUE(l.proof.proved()) << l.text;
    out.push_back(l.text);
  }
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(Synthesize, MatmulNeedsATransposedStationary) {
  auto l = lowerings("def f(x: f32[M, K], y: f32[K, N]):\n    return x @ y\n");
  EXPECT_TRUE(has(l, "nc_matmul(nc_transpose_pe(x), y)")) << ::testing::PrintToString(l);
  EXPECT_TRUE(has(l, "nc_matmul(dma_transpose(x), y)")) << ::testing::PrintToString(l);
}

TEST(Synthesize, TransposedMatmulIsOneInstruction) {
  auto l = lowerings("def f(x: f32[K, M], y: f32[K, N]):\n    return x.T @ y\n");
  EXPECT_EQ(l, std::vector<std::string>{"nc_matmul(x, y)"});
}

TEST(Synthesize, ElementwiseChoices) {
  auto e = lowerings("def f(x: f32[P, F]):\n    return exp(x)\n");
  EXPECT_TRUE(has(e, "activation(x, broadcast_to(0, shape=(P, 1)), func='exp', scale=1)"))
      << ::testing::PrintToString(e);
  auto a = lowerings("def f(x: f32[P, F], y: f32[P, F]):\n    return x + y\n");
  EXPECT_TRUE(has(a, "tensor_tensor(x, y, op='add')")) << ::testing::PrintToString(a);
  auto s = lowerings("def f(x: f32[P, F], b: f32[P, 1]):\n    return x * b\n");
  EXPECT_TRUE(has(s, "tensor_scalar(x, b, op0='mul')")) << ::testing::PrintToString(s);
}

TEST(Synthesize, PoolIsFilteredByConstituents) {
  static ir::Module m = ir::parse_module("def f(x: f32[P, F]):\n    return exp(x)\n", "op.py",
                                         sem::OpTable::builtin());
  SynthesisResult r = synthesize(m.kernels[0], isa());
  EXPECT_FALSE(has(r.pool, "nc_matmul"));
  EXPECT_TRUE(has(r.pool, "activation"));
}

}  // namespace
}  // namespace ts::lower

namespace ts::lower {
namespace {

// A result's record rebuilds the same lowerings (programs, texts, depths, verdicts) without a
// search; a record that does not fit the ISA is an internal error, not a wrong lowering.
TEST(Synthesize, RecordReplaysTheSameLowerings) {
  static ir::Module m = ir::parse_module(
      "def mm(x: f32[M, K], y: f32[K, N]):\n    return x @ y\n\n"
      "def sc(x: f32[P, F], b: f32[P, 1]):\n    return x * b\n",
      "op.py", sem::OpTable::builtin());
  for (const char* name : {"mm", "sc"}) {
    SynthesisResult r = synthesize(m.kernel(name), isa());
    ASSERT_FALSE(r.lowerings.empty()) << name;
    SynthesisResult back = replay_synthesis(m.kernel(name), isa(), synthesis_record(r));
    EXPECT_EQ(synthesis_record(back), synthesis_record(r)) << name;
    EXPECT_EQ(back.pool, r.pool);
    EXPECT_EQ(back.candidates, r.candidates);
    EXPECT_EQ(back.steps, r.steps);
    ASSERT_EQ(back.lowerings.size(), r.lowerings.size()) << name;
    for (std::size_t i = 0; i < r.lowerings.size(); ++i) {
      EXPECT_EQ(back.lowerings[i].text, r.lowerings[i].text);
      EXPECT_EQ(ir::kernel_signature(back.lowerings[i].program),
                ir::kernel_signature(r.lowerings[i].program));
      EXPECT_EQ(back.lowerings[i].depth, r.lowerings[i].depth);
      EXPECT_TRUE(back.lowerings[i].proof.proved());
    }
  }
  SynthesisResult r = synthesize(m.kernel("sc"), isa());
  std::string bad = synthesis_record(r);
  bad.replace(bad.rfind("tensor_scalar"), 13, "no_such_instr");  // a step, not the pool
  EXPECT_THROW(replay_synthesis(m.kernel("sc"), isa(), bad), InternalError);
}

// A cache that absorbed another's text rebuilds those results instead of searching.
TEST(SynthesisCache, AbsorbedTextReplacesTheSearch) {
  static ir::Module m = ir::parse_module("def f(x: f32[P, F]):\n    return exp(x) * x\n", "op.py",
                                         sem::OpTable::builtin());
  SynthesisCache searched, given;
  KernelChoices a = instruction_choices(m.kernels[0], isa(), searched);
  EXPECT_GT(searched.searches(), 0u);
  given.absorb(searched.text());
  KernelChoices b = instruction_choices(m.kernels[0], isa(), given);
  EXPECT_EQ(given.searches(), 0u);
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    ASSERT_TRUE(a.ops[i].synthesis && b.ops[i].synthesis);
    EXPECT_EQ(synthesis_record(*a.ops[i].synthesis), synthesis_record(*b.ops[i].synthesis));
  }
}

TEST(InstructionChoices, EveryComputeOpOfAKernel) {
  static ir::Module m = ir::parse_module(
      "def f(x: f32[B, M, K], w: f32[K, N], b: f32[N]):\n    y = x @ w\n    return silu(y + b)\n",
      "k.py", sem::OpTable::builtin());
  SynthesisCache cache;
  KernelChoices c = instruction_choices(m.kernels[0], isa(), cache);
  ASSERT_EQ(c.ops.size(), 3u);  // matmul, add, silu
  EXPECT_EQ(c.ops[0].tile, "matmul(x: f32[P, F], y: f32[F, K]) -> f32[P, K]");
  EXPECT_EQ(c.ops[1].tile,
            "add(x: f32[P, F], y: f32[P, F]) -> f32[P, F]");  // b arrives broadcast by DMA
  for (const auto& op : c.ops) EXPECT_FALSE(op.synthesis->lowerings.empty()) << op.label;
  EXPECT_EQ(c.unlowered, 0);
  EXPECT_GE(c.combinations, 2.0);
  // A second kernel with the same tile ops reuses the syntheses: the 3 ops' and the element-wise
  // region silu(y + b)'s (region.h).
  instruction_choices(m.kernels[0], isa(), cache);
  EXPECT_EQ(cache.hits(), 4u);
}

}  // namespace
}  // namespace ts::lower

#include "tilesweep/target/target.h"

namespace ts::lower {
namespace {

TEST(SynthesizeOnBundledTargets, ElementwiseOpsLowerToTheirInstructions) {
  static ir::Module m = ir::parse_module(
      "def e(x: f32[P, F]):\n    return exp(x)\n\ndef s(x: f32[P, F], b: f32[P, 1]):\n    return x "
      "- b\n",
      "op.py", sem::OpTable::builtin());
  for (const char* t : {"trn1", "trn2", "trn3"}) {
    const auto& isa = target::builtin_target(t).isa;
    SynthesisResult e = synthesize(m.kernel("e"), isa);
    ASSERT_FALSE(e.lowerings.empty()) << t;
    EXPECT_EQ(e.lowerings[0].depth, 1);
    bool activation = false;
    for (const auto& l : e.lowerings)
      activation = activation || l.text.rfind("activation(x", 0) == 0;
    EXPECT_TRUE(activation) << t;
    SynthesisResult s = synthesize(m.kernel("s"), isa);
    bool tensor_scalar = false;
    for (const auto& l : s.lowerings)
      tensor_scalar = tensor_scalar || l.text.rfind("tensor_scalar(x, b", 0) == 0;
    EXPECT_TRUE(tensor_scalar) << t;
  }
}

}  // namespace
}  // namespace ts::lower

namespace ts::lower {
namespace {

// Recurrences along the free dim lower to the vector engine's scan; a cumulative sum is that
// scan with a multiplier of ones (a synthesis leaf), proved through prod(1) = 1.
TEST(SynthesizeOnBundledTargets, RecurrencesLowerToTensorTensorScan) {
  struct Case {
    const char* kernel;
    const char* lowering;
  };
  static ir::Module m = ir::parse_module(
      "def c(x: f32[P, F]):\n    return cumsum(x, axis=1)\n\n"
      "def s(a: f32[P, F], b: f32[P, F]):\n    return scan(a, b, axis=1)\n",
      "op.py", sem::OpTable::builtin());
  for (const char* t : {"trn1", "trn2", "trn3"})
    for (const Case& c : {Case{"c", "tensor_tensor_scan(broadcast_to(1, shape=(P, F)), x)"},
                          Case{"s", "tensor_tensor_scan(a, b)"}}) {
      SynthesisResult r = synthesize(m.kernel(c.kernel), target::builtin_target(t).isa);
      std::vector<std::string> texts;
      for (const auto& l : r.lowerings) {
        EXPECT_TRUE(l.proof.proved()) << l.text;
        texts.push_back(l.text);
      }
      EXPECT_TRUE(has(texts, c.lowering))
          << t << " " << c.kernel << ": " << ::testing::PrintToString(texts);
    }
}

// A reduction without keepdims is lowered in its 2-D tile form (the reduced dim kept as 1):
// along the free dim to [P, 1], across partitions to [1, F].
TEST(SynthesizeOnBundledTargets, ReductionsKeepTheReducedDimInTheirTile) {
  static ir::Module m = ir::parse_module(
      "def f(x: f32[M, N], y: f32[B, S, N]):\n    return sum(x, axis=1), sum(y, axis=1)\n", "k.py",
      sem::OpTable::builtin());
  SynthesisCache cache;
  KernelChoices c = instruction_choices(m.kernels[0], target::builtin_target("trn1").isa, cache);
  ASSERT_EQ(c.ops.size(), 2u);
  EXPECT_EQ(c.ops[0].tile, "sum(x: f32[P, F]) -> f32[P, 1]");
  EXPECT_EQ(c.ops[1].tile, "sum(x: f32[P, F]) -> f32[1, F]");
  for (const auto& op : c.ops) EXPECT_FALSE(op.synthesis->lowerings.empty()) << op.tile;
}

}  // namespace
}  // namespace ts::lower

namespace ts::lower {
namespace {

// Instruction fusion of an element-wise op and its reduction (Axon §4.5): the tile is read once.
// A mean of squares has no single instruction (activation_reduce would need scale = 1/sqrt(F)),
// but activation_reduce(func='square') followed by a divide of the [P, 1] sums is found, and no
// sketch reads the tile twice.
TEST(SynthesizeOnBundledTargets, SinglePassFusesSquareWithItsMean) {
  ir::Module m =
      ir::parse_module("def f(x: f32[M, N]):\n    return mean(square(x), axis=1, keepdims=True)\n",
                       "op.py", sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels[0];
  auto pair = pair_tile_op(k, k.nodes[k.outputs[0]].inputs[0], k.outputs[0]);
  ASSERT_TRUE(pair);
  const auto& isa = target::builtin_target("trn1").isa;
  SynthesisOptions one;
  one.max_depth = 1;
  EXPECT_TRUE(synthesize(pair->kernel, isa, one).lowerings.empty());
  SynthesisOptions fused;
  fused.single_pass = true;
  SynthesisResult r = synthesize(pair->kernel, isa, fused);
  ASSERT_FALSE(r.lowerings.empty());
  EXPECT_NE(
      r.lowerings[0].text.find("activation_reduce(x, broadcast_to(0, shape=(P, 1)), func='square'"),
      std::string::npos)
      << r.lowerings[0].text;
  for (const auto& l : r.lowerings) {
    EXPECT_TRUE(l.proof.proved()) << l.text;
    int reads = 0;
    for (const auto& n : l.program.nodes)
      if (isa.find(n.op))
        for (int in : n.inputs)
          reads += l.program.nodes[in].shape == l.program.params[0].shape ? 1 : 0;
    EXPECT_EQ(reads, 1) << l.text;
  }
}

}  // namespace
}  // namespace ts::lower

namespace ts::lower {
namespace {

// A literal c in (0, 1) also offers 1 - c where the double prints as exactly that decimal, so
// `x - c * x` is one instruction scaling x by 1 - c (proved over the printed literals); where the
// double 1 - c is not the decimal (1 - 0.9 prints 0.09999999999999998) no such literal is offered.
TEST(SynthesizeOnBundledTargets, ExactComplementOfALiteralScalesInOneInstruction) {
  struct Case {
    const char* body;
    const char* complement;  // printed in some lowering, or nullptr: none offered
    const char* absent;      // printed in no lowering
  };
  for (const Case& c :
       {Case{"x - 1e-05 * x", "0.99999", "0.9999899"}, Case{"x - 0.001 * x", "0.999", "0.9989"},
        Case{"x - 0.25 * x", "0.75", "0.7499"}, Case{"x - 0.9 * x", nullptr, "0.0999"}}) {
    ir::Module m =
        ir::parse_module(std::string("def f(x: f32[P, F]):\n    return ") + c.body + "\n", "op.py",
                         sem::OpTable::builtin());
    for (const char* t : {"trn1", "trn2"}) {
      SynthesisResult r = synthesize(m.kernels[0], target::builtin_target(t).isa);
      bool complement = false;
      for (const auto& l : r.lowerings) {
        EXPECT_TRUE(l.proof.proved()) << l.text;
        EXPECT_EQ(l.text.find(c.absent), std::string::npos) << c.body << ": " << l.text;
        if (c.complement && l.text.find(c.complement) != std::string::npos) {
          complement = true;
          EXPECT_EQ(l.depth, 1) << l.text;
        }
      }
      EXPECT_EQ(complement, c.complement != nullptr) << t << " " << c.body;
    }
  }
}

}  // namespace
}  // namespace ts::lower

// The second propagation round (layout_swap.h): where a matmul's transposed left operand can be
// computed transposed, the proofs that each step keeps the semantics, and the instruction
// fusion transpose(nc_matmul(a, b)) = nc_matmul(b, a) found by synthesis.
#include "tilesweep/lower/layout_swap.h"

#include <gtest/gtest.h>

#include <string>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/graph_printer.h"
#include "tilesweep/lower/instruction_choices.h"
#include "tilesweep/target/target.h"
#include "tilesweep/verify/prove.h"

namespace ts::lower {
namespace {

ir::Kernel parse(const char* source) {
  return ir::parse_module(source, "t.py", sem::OpTable::builtin()).kernels.front();
}

std::string ops_of(const ir::Kernel& k, const std::vector<int>& nodes) {
  std::string s;
  for (int n : nodes) s += (s.empty() ? "" : ",") + k.nodes[n].op;
  return s;
}

struct SiteCase {
  const char* name;
  const char* source;
  int sites;
  const char* producers;  // ops of the first site's producers and chain
  const char* chain;
};

class SwapSiteCase : public ::testing::TestWithParam<SiteCase> {};

TEST_P(SwapSiteCase, FindsWhereTheTransposeCanMoveUp) {
  const SiteCase& c = GetParam();
  ir::Kernel k = parse(c.source);
  auto sites = swap_sites(k);
  ASSERT_EQ(static_cast<int>(sites.size()), c.sites);
  if (sites.empty()) return;
  EXPECT_EQ(ops_of(k, sites[0].producers), c.producers);
  EXPECT_EQ(ops_of(k, sites[0].chain), c.chain);
  EXPECT_EQ(k.nodes[sites[0].consumer].op, "matmul");
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, SwapSiteCase,
    ::testing::Values(
        SiteCase{"gated_mlp",
                 "def f(x: f32[M, K], w1: f32[K, N], w3: f32[K, N], w2: f32[N, K]) -> f32[M, K]:\n"
                 "    return matmul(silu(x @ w1) * (x @ w3), w2)\n",
                 1, "matmul,matmul", "silu,mul"},
        SiteCase{"two_matmuls",
                 "def f(x: f32[M, K], a: f32[K, R], b: f32[R, N]) -> f32[M, N]:\n    return (x @ "
                 "a) @ b\n",
                 1, "matmul", ""},
        SiteCase{"scalar_operand",
                 "def f(x: f32[M, K], a: f32[K, N], b: f32[N, K], s: f32) -> f32[M, K]:\n    "
                 "return matmul((x @ a) * s, b)\n",
                 1, "matmul", "mul"},
        // A per-row scalar would become a per-column vector: not moved.
        SiteCase{"row_scalar",
                 "def f(x: f32[M, K], a: f32[K, N], b: f32[N, K], r: f32[M, 1]) -> f32[M, K]:\n    "
                 "return matmul((x @ a) * r, b)\n",
                 0, "", ""},
        // The value is also an output: it is needed untransposed.
        SiteCase{"value_is_output",
                 "def f(x: f32[M, K], a: f32[K, N], b: f32[N, K]) -> (f32[M, N], f32[M, K]):\n"
                 "    h = x @ a\n    return h, h @ b\n",
                 0, "", ""},
        // A reduction in the chain does not commute with the transpose.
        SiteCase{"softmax_chain",
                 "def f(x: f32[M, K], a: f32[K, N], b: f32[N, K]) -> f32[M, K]:\n"
                 "    s = x @ a\n    return matmul(s / sum(s, axis=1, keepdims=True), b)\n",
                 0, "", ""},
        // No matmul to fuse with: the left operand comes from the input.
        SiteCase{"no_producer",
                 "def f(x: f32[M, K], b: f32[K, N]) -> f32[M, N]:\n    return matmul(exp(x), b)\n",
                 0, "", ""}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(LayoutSwap, ChainOpsCommuteWithTranspose) {
  ir::Kernel k = parse(
      "def f(x: f32[M, K], w1: f32[K, N], w3: f32[K, N], w2: f32[N, K]) -> f32[M, K]:\n"
      "    return matmul(silu(x @ w1) * (x @ w3), w2)\n");
  auto sites = swap_sites(k);
  ASSERT_EQ(sites.size(), 1u);
  for (int n : sites[0].chain) {
    auto [a, b] = commute_kernels(k, n);
    EXPECT_TRUE(verify::prove_equivalent(a, b).proved()) << k.nodes[n].op;
  }
}

TEST(LayoutSwap, ARowReductionDoesNotCommute) {
  // What the site search relies on when it stops at a reduction: the proof would fail too.
  ir::Kernel k =
      parse("def f(s: f32[M, N]) -> f32[M, 1]:\n    return sum(s, axis=1, keepdims=True)\n");
  auto [a, b] = commute_kernels(k, k.outputs[0]);
  EXPECT_FALSE(verify::prove_equivalent(a, b).proved());
}

TEST(LayoutSwap, SynthesisFindsTheSwappedMatmul) {
  const target::Target& t = target::builtin_target("trn1");
  SynthesisOptions one;
  one.max_depth = 1;
  SynthesisCache cache;
  auto root = transposed_root_op(*t.isa.find("nc_matmul"));
  ASSERT_TRUE(root);
  const SynthesisResult& fused = cache.get(*root, t.isa, one, nullptr);
  ASSERT_FALSE(fused.lowerings.empty());
  EXPECT_EQ(fused.lowerings.front().text, "nc_matmul(b, a)");
  const SynthesisResult& use = cache.get(transposed_use_op(), t.isa, one, nullptr);
  ASSERT_FALSE(use.lowerings.empty());
  EXPECT_EQ(use.lowerings.front().text, "nc_matmul(x, y)");
}

TEST(LayoutSwap, GatedMlpChoicesFuseEveryProducer) {
  ir::Kernel k = parse(
      "def f(x: f32[M, K], w1: f32[K, N], w3: f32[K, N], w2: f32[N, K]) -> f32[M, K]:\n"
      "    return matmul(silu(x @ w1) * (x @ w3), w2)\n");
  const target::Target& t = target::builtin_target("trn1");
  SynthesisCache cache;
  KernelChoices kc = instruction_choices(k, t.isa, cache);
  ASSERT_EQ(kc.swaps.size(), 1u);
  const SwapChoice& sc = kc.swaps[0];
  ASSERT_EQ(sc.producers.size(), 2u);
  for (const auto& fp : sc.producers) {
    ASSERT_FALSE(fp->fused.lowerings.empty());
    for (const auto& l : fp->fused.lowerings) {
      EXPECT_TRUE(l.proof.proved()) << l.text;
      // The fused producer multiplies y (stationary) by the transposed x (moving).
      EXPECT_EQ(l.text.rfind("nc_matmul(y, ", 0), 0u) << l.text;
    }
    EXPECT_EQ(fp->pre.size(), fp->fused.lowerings.size());
  }
  EXPECT_EQ(sc.fusions, std::vector<std::string>{"transpose(nc_matmul(a, b)) = nc_matmul(b, a)"});
}

}  // namespace
}  // namespace ts::lower

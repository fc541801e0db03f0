#include "tilesweep/mutate/propagate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/graph_printer.h"
#include "tilesweep/ir/interpreter.h"

namespace ts::mutate {
namespace {

namespace fs = std::filesystem;

ir::Module load(const std::string& suite, const std::string& name) {
  return ir::load_module(
      (fs::path(TS_SOURCE_DIR) / "jobs" / "kernels" / suite / (name + ".py")).string(),
      sem::OpTable::builtin());
}

// Some variant's step moves an `op` (e.g. "mul") past a matmul.
bool moves_past_matmul(const VariantSet& s, const std::string& op) {
  for (const auto& v : s.variants)
    if (v.step.rfind(op + "@", 0) == 0 && v.step.find("past matmul@") != std::string::npos)
      return true;
  return false;
}

TEST(Propagate, MultiplyPassesMatmulInRmsnormMatmul) {
  ir::Module m = load("axon", "rmsnorm_matmul");
  VariantSet s = propagate(m.kernels[0]);
  EXPECT_EQ(s.stop, StopReason::Saturated);
  EXPECT_TRUE(moves_past_matmul(s, "mul")) << "no variant moves the multiply past the matmul";
  for (const auto& p : s.proofs) EXPECT_TRUE(p.to_variant < 0 || p.verdict.proved());
}

TEST(Propagate, DivisionPassesMatmulInSoftmaxMatmul) {
  ir::Module m = load("axon", "softmax_matmul");
  VariantSet s = propagate(m.kernels[0]);
  EXPECT_TRUE(moves_past_matmul(s, "div"));
}

TEST(Propagate, GatedMlpHasNoSwap) {
  // Axon Fig. 7: neither silu nor the multiply can move past their successors.
  ir::Module m = ir::parse_module(
      "def f(x: f32[M, K], w1: f32[K, N], w3: f32[K, N]):\n    return silu(x @ w1) * (x @ w3)\n",
      "k.py", sem::OpTable::builtin());
  VariantSet s = propagate(m.kernels[0]);
  EXPECT_EQ(s.variants.size(), 1u);
  EXPECT_FALSE(s.proofs.empty());
}

TEST(Propagate, VariantsAreDistinctAndBudgetsStop) {
  ir::Module m = load("axon", "rmsnorm_matmul");
  PropagateOptions o;
  o.max_variants = 2;
  VariantSet s = propagate(m.kernels[0], o);
  EXPECT_EQ(s.variants.size(), 2u);
  EXPECT_EQ(s.stop, StopReason::VariantLimit);
  VariantSet all = propagate(m.kernels[0]);
  std::set<std::uint64_t> hashes;
  for (const auto& v : all.variants) hashes.insert(v.hash);
  EXPECT_EQ(hashes.size(), all.variants.size());
}

// Every variant of every suite kernel computes what the original does (reference interpreter,
// random inputs, small dims): the proofs are checked numerically too.
class SuiteVariants : public ::testing::TestWithParam<std::string> {};

TEST_P(SuiteVariants, AgreeNumericallyWithTheOriginal) {
  std::string param = GetParam();
  std::string suite = param.substr(0, param.find('/')), name = param.substr(param.find('/') + 1);
  ir::Module m = load(suite, name);
  const ir::Kernel& k = m.kernel(name);
  VariantSet s = propagate(k);
  sem::DimEnv dims;
  for (const auto& d : k.dims) dims[d] = 4;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uni(0.1, 1.0);
  std::vector<ir::Tensor> in;
  for (const auto& p : k.params) {
    ir::Tensor t(ir::concrete_shape(p.shape, dims));
    for (double& v : t.data) v = uni(rng);
    in.push_back(std::move(t));
  }
  auto want = ir::evaluate(k, dims, in, ir::Precision::F64);
  for (std::size_t i = 1; i < s.variants.size(); ++i) {
    auto got = ir::evaluate(s.variants[i].kernel, dims, in, ir::Precision::F64);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t o = 0; o < got.size(); ++o)
      for (std::size_t e = 0; e < got[o].data.size(); ++e)
        ASSERT_NEAR(got[o].data[e], want[o].data[e], 1e-9 + 1e-9 * std::fabs(want[o].data[e]))
            << "variant " << i << " (" << s.variants[i].step << ") output " << o << " element "
            << e;
  }
}

// The layout variant (permute.h): dims 0 and 1 of the rank-3 values swapped where some op
// computes one it can swap, proved equal to the original; none where no op can.
struct LayoutCase {
  const char* name;
  const char* source;
  bool swapped;
};

class LayoutVariant : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(LayoutVariant, IsOfferedAndProved) {
  const LayoutCase& c = GetParam();
  ir::Module m = ir::parse_module(c.source, "t.py", sem::OpTable::builtin());
  VariantSet s = propagate(m.kernels[0]);
  auto it = std::find_if(s.proofs.begin(), s.proofs.end(),
                         [](const SwapProof& p) { return p.op1 == "layout"; });
  ASSERT_EQ(it != s.proofs.end(), c.swapped);
  if (!c.swapped) return;
  EXPECT_TRUE(it->verdict.proved()) << it->verdict.reason;
  ASSERT_GT(it->to_variant, 0);
  const ir::Kernel& v = s.variants[static_cast<std::size_t>(it->to_variant)].kernel;
  EXPECT_NE(ir::expression_text(v).find("transpose("), std::string::npos) << ir::expression_text(v);
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, LayoutVariant,
    ::testing::Values(
        LayoutCase{"mamba",
                   "def f(delta: f32[C, M], u: f32[C, M], a: f32[C, S], b: f32[S, M], c: f32[S, "
                   "M]) -> f32[C, M]:\n"
                   "    d = reshape(delta, (C, 1, M))\n"
                   "    dA = exp(d * reshape(a, (C, S, 1)))\n"
                   "    dBu = d * reshape(b, (1, S, M)) * reshape(u, (C, 1, M))\n"
                   "    s = scan(dA, dBu, axis=2)\n"
                   "    return sum(reshape(c, (1, S, M)) * s, axis=1)\n",
                   true},
        // a rank-3 output: swapped inside, transposed back when stored
        LayoutCase{"elementwise_out",
                   "def f(x: f32[A, B, M], y: f32[A, B, M]) -> f32[A, B, M]:\n"
                   "    return exp(x) * y\n",
                   true},
        // a swapped value read by an op that cannot swap (a reduction along the free dim
        // changes the result's layout): not offered
        LayoutCase{"free_reduction",
                   "def f(x: f32[A, B, M]) -> f32[A, B]:\n    return sum(exp(x), axis=2)\n", false},
        LayoutCase{"matmul",
                   "def f(x: f32[B, M, K], y: f32[B, K, N]) -> f32[B, M, N]:\n"
                   "    return matmul(x, y)\n",
                   false},
        // a computed rank-3 value (a matmul's) read by a swappable op: not offered
        LayoutCase{"matmul_then_exp",
                   "def f(x: f32[B, M, K], y: f32[B, K, N]) -> f32[B, M, N]:\n"
                   "    return exp(matmul(x, y))\n",
                   false},
        LayoutCase{"rank2", "def f(x: f32[M, N]) -> f32[M, N]:\n    return exp(x)\n", false}),
    [](const auto& info) { return std::string(info.param.name); });

// Every variant of the first round gets its layout twin, each proved against the original: a
// rewrite and the layout compose (mamba's (delta * u) * b with C on the partitions). Main 98d4700
// swapped the original only (5 of mamba's 6 variants had no twin).
TEST(LayoutVariant, EveryRewrittenVariantHasATwin) {
  ir::Module m = ir::parse_module(
      "def f(delta: f32[C, M], u: f32[C, M], a: f32[C, S], b: f32[S, M], c: f32[S, M]) -> f32[C, "
      "M]:\n"
      "    d = reshape(delta, (C, 1, M))\n"
      "    dA = exp(d * reshape(a, (C, S, 1)))\n"
      "    dBu = d * reshape(b, (1, S, M)) * reshape(u, (C, 1, M))\n"
      "    s = scan(dA, dBu, axis=2)\n"
      "    return sum(reshape(c, (1, S, M)) * s, axis=1)\n",
      "t.py", sem::OpTable::builtin());
  VariantSet s = propagate(m.kernels[0]);
  std::set<int> twinned;
  std::size_t rewritten = 0;
  for (std::size_t i = 0; i < s.variants.size(); ++i) {
    const Variant& v = s.variants[i];
    if (v.step.rfind("layout", 0) != 0) {
      ++rewritten;
      continue;
    }
    EXPECT_EQ(s.variants[static_cast<std::size_t>(v.parent)].step.rfind("layout", 0),
              std::string::npos)
        << "variant " << i << " swaps a layout variant";
    twinned.insert(v.parent);
  }
  EXPECT_GT(rewritten, 1U);
  EXPECT_EQ(twinned.size(), rewritten);
  for (const SwapProof& p : s.proofs)
    if (p.op1 == "layout") EXPECT_TRUE(p.verdict.proved()) << p.verdict.reason;
}

std::vector<std::string> suite_kernels() {
  std::vector<std::string> out;
  for (const char* suite : {"axon", "nkibench"}) {
    fs::path dir = fs::path(TS_SOURCE_DIR) / "jobs" / "kernels" / suite;
    if (!fs::exists(dir)) continue;
    for (const auto& f : fs::directory_iterator(dir))
      if (f.path().extension() == ".py")
        out.push_back(std::string(suite) + "/" + f.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

INSTANTIATE_TEST_SUITE_P(Suites, SuiteVariants, ::testing::ValuesIn(suite_kernels()),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '/', '_');
                           return n;
                         });

}  // namespace
}  // namespace ts::mutate

#include "tilesweep/verify/prove.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tilesweep/ir/frontend.h"

namespace ts::verify {
namespace {

Verdict prove_src(const std::string& a, const std::string& b, VerdictCache* cache = nullptr) {
  static std::vector<ir::Module> keep;  // kernels must outlive the verdicts' use
  keep.push_back(ir::parse_module(a, "a.py", sem::OpTable::builtin()));
  keep.push_back(ir::parse_module(b, "b.py", sem::OpTable::builtin()));
  return prove_equivalent(keep[keep.size() - 2].kernels[0], keep.back().kernels[0], {}, cache);
}

TEST(Prove, ThreeWayVerdicts) {
  struct Case {
    const char* a;
    const char* b;
    VerdictKind want;
  } cases[] = {
      {"def f(x: f32[M, K], w: f32[K, N]):\n    return (x * 2.0) @ w\n",
       "def f(x: f32[M, K], w: f32[K, N]):\n    return 2.0 * (x @ w)\n", VerdictKind::Equivalent},
      {"def f(x: f32[M, N]):\n    return sum(x, axis=1) / N\n",
       "def f(x: f32[M, N]):\n    return mean(x, axis=1)\n", VerdictKind::Equivalent},
      {"def f(x: f32[M, N]):\n    return sum(x, axis=1)\n",
       "def f(x: f32[M, N]):\n    return mean(x, axis=1)\n", VerdictKind::NotEquivalent},
      {"def f(x: f32[N, N]):\n    return sum(x, axis=0)\n",
       "def f(x: f32[N, N]):\n    return sum(x, axis=1)\n", VerdictKind::NotEquivalent},
      // True over the reals, but it needs exp(a + b) = exp(a) exp(b), which the uninterpreted
      // exp does not know: the solver's model is not a real counterexample.
      {"def f(a: f32[N], b: f32[N]):\n    return exp(a + b)\n",
       "def f(a: f32[N], b: f32[N]):\n    return exp(a) * exp(b)\n", VerdictKind::Unknown},
  };
  for (const auto& c : cases) {
    Verdict v = prove_src(c.a, c.b);
    EXPECT_EQ(v.kind, c.want) << c.a << " vs " << c.b << ": " << v.reason;
  }
}

TEST(Prove, CounterexampleIsConcrete) {
  Verdict v = prove_src("def f(x: f32[M, N]):\n    return relu(x) + relu(-x)\n",
                        "def f(x: f32[M, N]):\n    return x\n");
  ASSERT_EQ(v.kind, VerdictKind::NotEquivalent);
  ASSERT_TRUE(v.counterexample);
  EXPECT_EQ(v.counterexample->index.size(), 2u);
  EXPECT_NE(v.counterexample->lhs, v.counterexample->rhs);
  EXPECT_NE(v.counterexample->str().find("output 0["), std::string::npos);
}

TEST(Prove, DifferentShapesAreNotEquivalent) {
  Verdict v = prove_src("def f(x: f32[M, N]):\n    return x\n", "def f(x: f32[M, N]):\n    return x[:, 1:]\n");
  ASSERT_EQ(v.kind, VerdictKind::NotEquivalent);
  EXPECT_NE(v.reason.find("shape"), std::string::npos);
}

// Regression: a rewrite well-shaped only for some dims (here it needs N == N // 2, i.e. no
// valid N at all) was "equivalent" vacuously, because both kernels' preconditions were assumed.
TEST(Prove, BothKernelsMustAcceptTheSameDims) {
  Verdict v = prove_src("def f(x: f32[M, N], c: f32[M, N // 2]):\n    return x[:, : N // 2] * c\n",
                        "def f(x: f32[M, N], c: f32[M, N // 2]):\n    return (x * c)[:, : N // 2]\n");
  ASSERT_EQ(v.kind, VerdictKind::NotEquivalent);
  EXPECT_NE(v.reason.find("accept different dims"), std::string::npos) << v.reason;
}

TEST(Prove, DifferentParametersAreAUserError) {
  EXPECT_THROW(prove_src("def f(x: f32[M, N]):\n    return x\n", "def f(x: f32[N, M]):\n    return x.T.T\n"), UserError);
}

TEST(VerdictCache, SameQueryUpToRenamingIsSolvedOnce) {
  VerdictCache cache;
  Verdict first = prove_src("def f(x: f32[M, K], w: f32[K, N], s: f32[M, 1]):\n    return (x * s) @ w\n",
                            "def f(x: f32[M, K], w: f32[K, N], s: f32[M, 1]):\n    return (x @ w) * s\n", &cache);
  Verdict again = prove_src("def g(a: f32[P, Q], b: f32[Q, R], c: f32[P, 1]):\n    t = a * c\n    return t @ b\n",
                            "def g(a: f32[P, Q], b: f32[Q, R], c: f32[P, 1]):\n    return (a @ b) * c\n", &cache);
  EXPECT_TRUE(first.proved());
  EXPECT_FALSE(first.cached);
  EXPECT_TRUE(again.proved());
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(cache.hits(), 1u);
}

TEST(VerdictCache, PersistsAcrossRuns) {
  std::string path = (std::filesystem::temp_directory_path() / "ts_verdicts.txt").string();
  std::filesystem::remove(path);
  const char* a = "def f(x: f32[N]):\n    return x + x\n";
  const char* b = "def f(x: f32[N]):\n    return 2.0 * x\n";
  {
    VerdictCache cache(path);
    EXPECT_FALSE(prove_src(a, b, &cache).cached);
    cache.save();
  }
  VerdictCache reloaded(path);
  EXPECT_EQ(reloaded.size(), 1u);
  Verdict v = prove_src(a, b, &reloaded);
  EXPECT_TRUE(v.cached);
  EXPECT_TRUE(v.proved());
}

}  // namespace
}  // namespace ts::verify

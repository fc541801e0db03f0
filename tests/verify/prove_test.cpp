#include "tilesweep/verify/prove.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tilesweep/ir/frontend.h"

namespace ts::verify {
namespace {

Verdict prove_src(const std::string& a, const std::string& b, VerdictCache* cache = nullptr,
                  const sem::OpTable& ops = sem::OpTable::builtin(), ProveOptions options = {}) {
  static std::vector<ir::Module> keep;  // kernels must outlive the verdicts' use
  keep.push_back(ir::parse_module(a, "a.py", ops));
  keep.push_back(ir::parse_module(b, "b.py", ops));
  return prove_equivalent(keep[keep.size() - 2].kernels[0], keep.back().kernels[0], options, cache);
}

std::string why(const Verdict& v) {
  return std::string(verdict_name(v.kind)) + ": " + v.reason +
         (v.counterexample ? " " + v.counterexample->str() : "");
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
      // exp(a + b) = exp(a) exp(b) is a rewrite of the normal form.
      {"def f(a: f32[N], b: f32[N]):\n    return exp(a + b)\n",
       "def f(a: f32[N], b: f32[N]):\n    return exp(a) * exp(b)\n", VerdictKind::Equivalent},
      // True over the reals (tanh is odd), but tanh is uninterpreted: the solver's model is not
      // a real counterexample.
      {"def f(a: f32[N]):\n    return tanh(-a)\n", "def f(a: f32[N]):\n    return -tanh(a)\n",
       VerdictKind::Unknown},
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
  Verdict v = prove_src("def f(x: f32[M, N]):\n    return x\n",
                        "def f(x: f32[M, N]):\n    return x[:, 1:]\n");
  ASSERT_EQ(v.kind, VerdictKind::NotEquivalent);
  EXPECT_NE(v.reason.find("shape"), std::string::npos);
}

// Regression: a rewrite well-shaped only for some dims (here it needs N == N // 2, i.e. no
// valid N at all) was "equivalent" vacuously, because both kernels' preconditions were assumed.
TEST(Prove, BothKernelsMustAcceptTheSameDims) {
  Verdict v =
      prove_src("def f(x: f32[M, N], c: f32[M, N // 2]):\n    return x[:, : N // 2] * c\n",
                "def f(x: f32[M, N], c: f32[M, N // 2]):\n    return (x * c)[:, : N // 2]\n");
  ASSERT_EQ(v.kind, VerdictKind::NotEquivalent);
  EXPECT_NE(v.reason.find("accept different dims"), std::string::npos) << v.reason;
}

TEST(Prove, DifferentParametersAreAUserError) {
  EXPECT_THROW(
      prove_src("def f(x: f32[M, N]):\n    return x\n", "def f(x: f32[N, M]):\n    return x.T.T\n"),
      UserError);
}

TEST(VerdictCache, SameQueryUpToRenamingIsSolvedOnce) {
  VerdictCache cache;
  Verdict first = prove_src(
      "def f(x: f32[M, K], w: f32[K, N], s: f32[M, 1]):\n    return (x * s) @ w\n",
      "def f(x: f32[M, K], w: f32[K, N], s: f32[M, 1]):\n    return (x @ w) * s\n", &cache);
  Verdict again = prove_src(
      "def g(a: f32[P, Q], b: f32[Q, R], c: f32[P, 1]):\n    t = a * c\n    return t @ b\n",
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

// ---- regressions of issue 18: adversarial pairs that were answered wrongly ------------------

struct Pair {
  const char* what;
  const char* a;
  const char* b;
  VerdictKind want;         // the right answer
  bool unknown_ok = false;  // Unknown is acceptable too (never Equivalent for unequal kernels)
};

void expect_all(const std::vector<Pair>& pairs) {
  for (const auto& p : pairs) {
    Verdict v = prove_src(p.a, p.b);
    if (p.unknown_ok && v.kind == VerdictKind::Unknown) {
      EXPECT_FALSE(v.reason.empty()) << p.what;
      continue;
    }
    EXPECT_EQ(v.kind, p.want) << p.what << ": " << why(v);
    if (v.kind == VerdictKind::NotEquivalent) {
      EXPECT_TRUE(v.counterexample.has_value()) << p.what;
    }
  }
}

// 1. A dim spelled like an internal variable (the output index of axis d was `i<d>`).
TEST(Issue18, DimNamesNeverCaptureInternalVariables) {
  std::vector<Pair> pairs;
  for (const char* dim : {"i0", "i1", "in0", "r0", "c", "b", "exp", "sum"}) {
    static std::vector<std::string> texts;
    texts.push_back(fmt::format("def k(x: f32[{0}, N]):\n    return x\n", dim));
    texts.push_back(fmt::format("def k(x: f32[{0}, N]):\n    return -x\n", dim));
    texts.push_back(fmt::format("def k(x: f32[N, {0}]):\n    return sum(x, axis=1)\n", dim));
    texts.push_back(fmt::format("def k(x: f32[N, {0}]):\n    return max(x, axis=1)\n", dim));
    auto n = texts.size();
    pairs.push_back({dim, texts[n - 4].c_str(), texts[n - 3].c_str(), VerdictKind::NotEquivalent});
    pairs.push_back({dim, texts[n - 2].c_str(), texts[n - 1].c_str(), VerdictKind::NotEquivalent});
  }
  expect_all(pairs);
}

// Issue 22: relations between dims (C == D * H from a reshape, N == 2 * F from a split weight)
// are preconditions, assumed by the proofs; a kernel without the relation accepts other dims.
TEST(Issue22, RelationsBetweenDimsAreAssumed) {
  const char* split = "def k(x: f32[T, K], w: f32[K, N], wd: f32[F, K]):\n    h = x @ w\n";
  std::string gated = std::string(split) + "    return (silu(h[:, :F]) * h[:, F:]) @ wd\n";
  std::string sliced = std::string(split) + "    return (silu(h)[:, :F] * h[:, F:]) @ wd\n";
  std::string other = std::string(split) + "    return (silu(h[:, :F]) * h[:, :F]) @ wd\n";
  expect_all({
      {"reshape to heads, scale moved",
       "def k(x: f32[T, C], g: f32[H, D]):\n"
       "    return reshape(x, (T, H, D)) * g * 2.0\n",
       "def k(x: f32[T, C], g: f32[H, D]):\n    return reshape(x * 2.0, (T, H, D)) * g\n",
       VerdictKind::Equivalent},
      {"slice past silu under N == 2 * F", gated.c_str(), sliced.c_str(), VerdictKind::Equivalent},
      {"the halves differ", gated.c_str(), other.c_str(), VerdictKind::NotEquivalent},
  });
}

// 2. No dims satisfy the preconditions: nothing is proved (it was vacuously "equivalent").
TEST(Issue18, AnEmptyDomainProvesNothing) {
  expect_all({
      {"broadcast needs N == N // 2", "def k(x: f32[N], y: f32[N // 2]):\n    return x + y\n",
       "def k(x: f32[N], y: f32[N // 2]):\n    return x - y\n", VerdictKind::NotEquivalent, true},
      {"slice 2N:N", "def k(x: f32[M, N]):\n    return x[:, 2 * N : N]\n",
       "def k(x: f32[M, N]):\n    return -x[:, 2 * N : N]\n", VerdictKind::NotEquivalent, true},
  });
  Verdict v = prove_src("def k(x: f32[N], y: f32[N // 2]):\n    return x + y\n",
                        "def k(x: f32[N], y: f32[N // 2]):\n    return x + y\n");
  EXPECT_EQ(v.kind, VerdictKind::Unknown) << why(v);
  EXPECT_NE(v.reason.find("no dims satisfy"), std::string::npos) << v.reason;
}

// 3. A return annotation that disagrees with the inferred shape narrowed the domain silently.
TEST(Issue18, AReturnAnnotationThatDisagreesIsAnError) {
  try {
    ir::parse_module("def k(x: f32[M, N]) -> f32[M, N // 2]:\n    return x[:, ::2]\n", "a.py",
                     sem::OpTable::builtin());
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.loc().line, 1);
    EXPECT_NE(e.message().find("annotation declares f32[M, N // 2]"), std::string::npos)
        << e.message();
  }
  // Where the kernel's own preconditions imply the declared shape (the halves of a 2x2 max pool
  // must match, so M and N are even), it stands.
  ir::Module pool = ir::parse_module(
      "def k(x: f32[M, N]) -> f32[M // 2, N // 2]:\n    t = maximum(x[0::2, 0::2], x[0::2, 1::2])\n"
      "    b = maximum(x[1::2, 0::2], x[1::2, 1::2])\n    return maximum(t, b)\n",
      "pool.py", sem::OpTable::builtin());
  Verdict same = prove_equivalent(pool.kernels[0], pool.kernels[0]);
  EXPECT_EQ(same.kind, VerdictKind::Equivalent) << why(same);
  // The inferred width is (N + 1) // 2: the kernels differ at odd N.
  Verdict v =
      prove_src("def k(x: f32[M, N]) -> f32[M, (N + 1) // 2]:\n    return x[:, ::2]\n",
                "def k(x: f32[M, N]) -> f32[M, (N + 1) // 2]:\n    return x[:, : (N + 1) // 2]\n");
  EXPECT_EQ(v.kind, VerdictKind::NotEquivalent) << why(v);
}

// 4. Equal kernels whose float64 evaluation differs by rounding (6e-7): never a counterexample.
TEST(Issue18, RoundingIsNotACounterexample) {
  expect_all({
      {"max shifted by 1e10",
       "def k(x: f32[M, N]):\n    return max(2.0 * x + 1e10, axis=1) - 1e10\n",
       "def k(x: f32[M, N]):\n    return 2.0 * max(x, axis=1)\n", VerdictKind::Equivalent},
      {"sum shifted by 1e10 (tanh keeps it unproved)",
       "def k(x: f32[M, N]):\n    return tanh(x) + 1e10 - 1e10\n",
       "def k(x: f32[M, N]):\n    return tanh(x)\n", VerdictKind::Equivalent},
      // Unequal, by far more than rounding: still refuted.
      {"max of 2x vs 3 max x",
       "def k(x: f32[M, N]):\n    return max(2.0 * x + 1e10, axis=1) - 1e10\n",
       "def k(x: f32[M, N]):\n    return 3.0 * max(x, axis=1)\n", VerdictKind::NotEquivalent},
  });
}

// 5. The cache key: dims renamed by position (a dim named like an op), ops by their semantics.
TEST(Issue18, CacheKeysFollowTheQueryNotItsSpelling) {
  VerdictCache cache;
  EXPECT_TRUE(prove_src("def k(x: f32[add]):\n    return x + x\n",
                        "def k(x: f32[add]):\n    return 2.0 * x\n", &cache)
                  .proved());
  Verdict v = prove_src("def k(x: f32[sub]):\n    return x - x\n",
                        "def k(x: f32[sub]):\n    return 2.0 * x\n", &cache);
  EXPECT_FALSE(v.cached);
  EXPECT_EQ(v.kind, VerdictKind::NotEquivalent) << why(v);

  sem::OpTable plus = sem::OpTable::builtin(), times = sem::OpTable::builtin();
  plus.load("[op.myop]\noperands = [\"x\"]\nexpr = \"x + x\"\n", "plus.toml");
  times.load("[op.myop]\noperands = [\"x\"]\nexpr = \"x * x\"\n", "times.toml");
  const char* a = "def k(x: f32[N]):\n    return myop(x)\n";
  const char* b = "def k(x: f32[N]):\n    return 2.0 * x\n";
  EXPECT_TRUE(prove_src(a, b, &cache, plus).proved());
  Verdict w = prove_src(a, b, &cache, times);
  EXPECT_FALSE(w.cached);
  EXPECT_EQ(w.kind, VerdictKind::NotEquivalent) << why(w);
}

TEST(Issue18, CacheFilesOfAnotherVersionAreIgnored) {
  std::string path = (std::filesystem::temp_directory_path() / "ts_verdicts_v1.txt").string();
  {
    std::ofstream old(path);
    old << "0123456789abcdef equivalent \n";  // a version-1 file: no header
  }
  VerdictCache cache(path);
  EXPECT_EQ(cache.size(), 0u);
  std::filesystem::remove(path);
}

// 6. Division by zero (and log, sqrt outside their domain) leaves an element undefined.
TEST(Issue18, UndefinedElementsAreNotEqualToDefinedOnes) {
  expect_all({
      {"0 * (1/0)",
       "def k(x: f32[M, N]):\n    return sum(x - mean(x, axis=1, keepdims=True), axis=1) / "
       "sum(square(x), axis=1)\n",
       "def k(x: f32[M, N]):\n    return 0.0 * sum(x, axis=1)\n", VerdictKind::NotEquivalent, true},
      {"x / y * 0", "def k(x: f32[N], y: f32[N]):\n    return x / y * 0.0\n",
       "def k(x: f32[N], y: f32[N]):\n    return 0.0 * x\n", VerdictKind::NotEquivalent, true},
      {"log(x) - log(x)", "def k(x: f32[N]):\n    return log(x) - log(x)\n",
       "def k(x: f32[N]):\n    return 0.0 * x\n", VerdictKind::NotEquivalent, true},
      {"sqrt(x) * 0", "def k(x: f32[N]):\n    return sqrt(x) * 0.0\n",
       "def k(x: f32[N]):\n    return 0.0 * x\n", VerdictKind::NotEquivalent, true},
      {"divide inside a sum",
       "def k(x: f32[M, N], y: f32[M, N]):\n    return sum(x / y - x / y, axis=1)\n",
       "def k(x: f32[M, N], y: f32[M, N]):\n    return 0.0 * sum(x, axis=1)\n",
       VerdictKind::NotEquivalent, true},
      // Both sides divide by the same y: undefined at the same elements, equal elsewhere.
      {"x / y * z", "def k(x: f32[N], y: f32[N], z: f32[N]):\n    return x / y * z\n",
       "def k(x: f32[N], y: f32[N], z: f32[N]):\n    return x * z / y\n", VerdictKind::Equivalent},
      // A divisor that is provably non-zero: the sum of exps.
      {"softmax rows",
       "def k(x: f32[M, N]):\n    e = exp(x)\n    return e / sum(e, axis=1, keepdims=True)\n",
       "def k(x: f32[M, N]):\n    e = exp(x - max(x, axis=1, keepdims=True))\n    return e / "
       "sum(e, axis=1, keepdims=True)\n",
       VerdictKind::Equivalent},
  });
}

// 7. Literals and dims out of range are errors with a location; parameters match by name.
TEST(Issue18, OutOfRangeLiteralsAndDimsAreErrorsWithALocation) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {
      {"def k(x: f32[N]):\n    return x * 1e400\n", "out of the range of a 64-bit float"},
      {"def k(x: f32[N + 4294967296 * 4294967296]):\n    return x\n", "overflows 64-bit integers"},
      {"def k(x: f32[N]):\n    return x[: 4611686018427387904 * 4]\n", "overflows"},
  };
  for (const auto& c : cases) {
    try {
      ir::parse_module(c.text, "a.py", sem::OpTable::builtin());
      ADD_FAILURE() << "no error for " << c.text;
    } catch (const UserError& e) {
      EXPECT_EQ(e.loc().line, 1 + (std::string(c.text).find("return x[") != std::string::npos ||
                                   std::string(c.text).find("1e400") != std::string::npos))
          << e.what();
      EXPECT_GT(e.loc().col, 0) << e.what();
      EXPECT_NE(e.message().find(c.says), std::string::npos) << e.what();
    }
  }
}

TEST(Issue18, ParametersAreMatchedByName) {
  ProveOptions by_name;
  by_name.match_by_name = true;
  const char* a = "def k(x: f32[N], y: f32[N]):\n    return x - y\n";
  const char* b = "def k(y: f32[N], x: f32[N]):\n    return x - y\n";
  EXPECT_EQ(prove_src(a, b, nullptr, sem::OpTable::builtin(), by_name).kind,
            VerdictKind::Equivalent);
  EXPECT_EQ(prove_src(a, b).kind, VerdictKind::NotEquivalent);  // by position (the library default)
  EXPECT_THROW(prove_src(a, "def k(x: f32[N], z: f32[N]):\n    return x - z\n", nullptr,
                         sem::OpTable::builtin(), by_name),
               UserError);
  // The cache keeps the two matchings apart.
  VerdictCache cache;
  EXPECT_TRUE(prove_src(a, b, &cache, sem::OpTable::builtin(), by_name).proved());
  EXPECT_FALSE(prove_src(a, b, &cache).proved());
}

// The budget is Z3's deterministic resource count: the same query, the same verdict.
TEST(Issue18, TheBudgetIsDeterministic) {
  ProveOptions tiny;
  tiny.rlimit = 1;
  const char* a = "def k(x: f32[M, K], w: f32[K, N]):\n    return (x * 2.0) @ w\n";
  const char* b = "def k(x: f32[M, K], w: f32[K, N]):\n    return 2.0 * (x @ w)\n";
  for (int i = 0; i < 3; ++i) {
    Verdict v = prove_src(a, b, nullptr, sem::OpTable::builtin(), tiny);
    EXPECT_EQ(v.kind, VerdictKind::Unknown) << why(v);
    EXPECT_NE(v.reason.find("resource limit"), std::string::npos) << v.reason;
  }
  EXPECT_TRUE(prove_src(a, b).proved());
}

}  // namespace
}  // namespace ts::verify

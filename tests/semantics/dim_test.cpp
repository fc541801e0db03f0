#include "tilesweep/semantics/dim.h"

#include <gtest/gtest.h>

namespace ts::sem {
namespace {

Dim M = Dim::symbol("M"), N = Dim::symbol("N"), K = Dim::symbol("K");

// A constant is keyed without the general normalization (the lowering makes thousands of them
// per candidate): its key is the one arithmetic arrives at.
TEST(Dim, ConstantKeysMatchArithmetic) {
  struct Case {
    Dim constant, computed;
  } cases[] = {
      {Dim(0), M - M},
      {Dim(5), Dim(2) + Dim(3)},
      {Dim(-7), Dim(0) - Dim(7)},
      {Dim(128), Dim(16) * Dim(8)},
      {Dim(-1), Dim(3) - Dim(4)},
      {Dim(std::int64_t{1} << 40), Dim(std::int64_t{1} << 20) * Dim(std::int64_t{1} << 20)},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(c.constant.key(), c.computed.key());
    EXPECT_EQ(c.constant.str(), c.computed.str());
    EXPECT_TRUE(c.constant == c.computed) << c.constant.key();
  }
}

TEST(Dim, CanonicalText) {
  struct Case {
    Dim d;
    const char* text;
  } cases[] = {
      {M + N, "M + N"},
      {N + M, "M + N"},
      {M * N + K, "M * N + K"},
      {N * M, "M * N"},
      {M - M, "0"},
      {floordiv(N, 2), "N // 2"},
      {N - floordiv(N, 2), "N - N // 2"},
      {floordiv(2 * N, 2), "N"},
      {floordiv(2 * N + 1, 2), "N"},
      {floordiv(2 * N + 3, 2), "N + 1"},
      {floordiv(N + 1, 2), "(N + 1) // 2"},
      {2 * floordiv(N, 2), "2 * (N // 2)"},
      {floordiv(M * N, M * N), "1"},
      {Dim(-3) + M, "M - 3"},
      {Dim(7), "7"},
  };
  for (const auto& c : cases) EXPECT_EQ(c.d.str(), c.text);
}

TEST(Dim, EqualityIsStructural) {
  EXPECT_EQ(M * (N + K), M * N + K * M);
  EXPECT_FALSE(M == N);
  EXPECT_EQ(floordiv(4 * M, 2), 2 * M);
}

TEST(Dim, Evaluate) {
  DimEnv env{{"M", 7}, {"N", 10}};
  EXPECT_EQ(*(M * N).evaluate(env), 70);
  EXPECT_EQ(*floordiv(M, 2).evaluate(env), 3);
  EXPECT_EQ(*floordiv(M + 1, 2).evaluate(env), 4);
  EXPECT_EQ(*(Dim(0) - floordiv(M, 2)).evaluate(env), -3);
  EXPECT_FALSE(K.evaluate(env).has_value());
}

TEST(Dim, FloordivAndSymbols) {
  EXPECT_TRUE(floordiv(N, 2).has_floordiv());
  EXPECT_FALSE((M + N).has_floordiv());
  EXPECT_EQ((M * floordiv(N + K, 2)).symbols(), (std::vector<std::string>{"K", "M", "N"}));
}

TEST(Dim, ProvablyNonneg) {
  EXPECT_TRUE((M - 1).provably_nonneg());
  EXPECT_TRUE((M * N + floordiv(K, 2)).provably_nonneg());
  EXPECT_FALSE((M - 2).provably_nonneg());
  EXPECT_FALSE((M - N).provably_nonneg());
}

}  // namespace
}  // namespace ts::sem

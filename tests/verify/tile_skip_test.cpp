// The tile-skipping rule of masked reductions (verify/tile_skip.h), table-driven: masks from
// iota comparisons with the fill that is their reduction's identity are proved; a mask that is not
// affine, or a fill that is not the identity, is refused with the reason.
#include "tilesweep/verify/tile_skip.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace ts::verify {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// where(iota(S, axis=1) <= iota(S, axis=0), s, fill): (i P + p) - (j W + f) >= 0.
constexpr TileMask kCausal{1, -1, 0, 1, -1, 0};
// where(iota(S, axis=1) < iota(S, axis=0), ...): (i P + p) - (j W + f) - 1 >= 0.
constexpr TileMask kStrict{1, -1, -1, 1, -1, 0};
// where(iota(S, axis=1) >= iota(S, axis=0), ...): (j W + f) - (i P + p) >= 0 (anti-causal).
constexpr TileMask kAnti{-1, 1, 0, -1, 1, 0};
// A predicate with a p * f term: not affine.
constexpr TileMask kCross{1, -1, 0, 1, -1, 1};
// No tile origin in the offset: the same mask in every tile.
constexpr TileMask kNoOrigin{0, 0, 0, 1, -1, 0};

struct Case {
  const char* name;
  TileMask mask;
  double fill;
  Contribution into;
  const char* refused;  // nullptr: proved; else a substring of the reason
};

const Case kCases[] = {
    {"causal max", kCausal, -kInf, Contribution::Max, nullptr},
    {"causal sum exp", kCausal, -kInf, Contribution::SumExp, nullptr},
    {"causal matmul", kCausal, -kInf, Contribution::MatmulAccumulate, nullptr},
    {"strict max", kStrict, -kInf, Contribution::Max, nullptr},
    {"anti-causal matmul", kAnti, -kInf, Contribution::MatmulAccumulate, nullptr},
    {"not affine", kCross, -kInf, Contribution::Max, "not affine"},
    {"no tile origin", kNoOrigin, -kInf, Contribution::Max, "does not depend on the tile origins"},
    {"zero fill into max", kCausal, 0.0, Contribution::Max,
     "does not contribute the identity to max"},
    {"zero fill into sum", kCausal, 0.0, Contribution::SumExp,
     "does not contribute the identity to sum of exp"},
    {"finite fill into matmul", kCausal, -1e30, Contribution::MatmulAccumulate,
     "does not contribute the identity to matmul"},
    {"+inf fill into max", kCausal, kInf, Contribution::Max, "does not contribute the identity"},
    {"+inf fill into sum", kCausal, kInf, Contribution::SumExp, "does not contribute the identity"},
    {"causal online sum", kCausal, -kInf, Contribution::RescaledSumExp, nullptr},
    {"causal online matmul", kCausal, -kInf, Contribution::RescaledMatmulAccumulate, nullptr},
    {"zero fill into online sum", kCausal, 0.0, Contribution::RescaledSumExp,
     "does not contribute the identity to rescaled sum"},
    {"+inf fill into online matmul", kCausal, kInf, Contribution::RescaledMatmulAccumulate,
     "does not contribute the identity to rescaled matmul"},
    {"NaN fill", kCausal, std::numeric_limits<double>::quiet_NaN(), Contribution::Max, "NaN"},
};

TEST(TileSkip, RuleTable) {
  for (const Case& c : kCases) {
    TileSkipProof p = prove_tile_skip({c.mask, c.fill, c.into});
    // (the memoized form answers the same, twice)
    for (int twice = 0; twice < 2; ++twice) {
      TileSkipProof once = prove_tile_skip_once({c.mask, c.fill, c.into});
      EXPECT_EQ(once.proved, p.proved) << c.name;
    }
    if (!c.refused) {
      EXPECT_TRUE(p.proved) << c.name << ": " << p.why;
      continue;
    }
    EXPECT_FALSE(p.proved) << c.name;
    EXPECT_NE(p.why.find(c.refused), std::string::npos) << c.name << ": " << p.why;
  }
}

// The causal guard fails exactly where j * W >= (i + 1) * P (the tiles above the diagonal), and
// the anti-causal one where (j + 1) * W <= i * P; numerically over a grid of tile shapes.
TEST(TileSkip, GuardIsTheDiagonal) {
  TileSkipProof causal = prove_tile_skip({kCausal, -kInf, Contribution::Max});
  TileSkipProof anti = prove_tile_skip({kAnti, -kInf, Contribution::Max});
  ASSERT_TRUE(causal.proved && anti.proved);
  for (std::int64_t P : {1, 64, 128})
    for (std::int64_t W : {1, 128, 512})
      for (std::int64_t i = 0; i < 12; ++i)
        for (std::int64_t j = 0; j < 12; ++j) {
          bool runs = P * i - W * j + causal.corner(P, W) >= 0;
          EXPECT_EQ(!runs, j * W >= (i + 1) * P) << P << " " << W << " " << i << " " << j;
          bool anti_runs = -P * i + W * j + anti.corner(P, W) >= 0;
          EXPECT_EQ(!anti_runs, (j + 1) * W <= i * P) << P << " " << W << " " << i << " " << j;
        }
}

// The whole-row rule (the masked row whole on chip, windows of its columns skipped): the window
// masked part over the select's per-element coefficients, then the select overwriting the
// window, or the chain from the select's output to a matmul's operand turning the fill into the
// accumulation's identity (0).
struct WindowCase {
  const char* name;
  std::int64_t channel_multiplier, step, cross;
  double fill;
  WindowUse use;
  std::vector<ChainOp> chain;
  const char* refused;  // nullptr: proved; else a substring of the reason
};

using enum ChainOp;

const WindowCase kWindowCases[] = {
    {"causal overwritten", 1, -1, 0, -kInf, WindowUse::Overwritten, {}, nullptr},
    {"anti-causal overwritten", -1, 1, 0, -kInf, WindowUse::Overwritten, {}, nullptr},
    {"finite fill overwritten", 1, -1, 0, -1e30, WindowUse::Overwritten, {}, nullptr},
    {"causal exp(x - m) into P.V", 1, -1, 0, -kInf, WindowUse::ZeroFactor, {SubRow, Exp}, nullptr},
    {"causal exp(x - m) / l into P.V",
     1,
     -1,
     0,
     -kInf,
     WindowUse::ZeroFactor,
     {SubRow, Exp, DivRow},
     nullptr},
    {"causal bf16 probabilities into P.V",
     1,
     -1,
     0,
     -kInf,
     WindowUse::ZeroFactor,
     {SubRow, Exp, DivRow, Cast},
     nullptr},
    {"scaled scores exp(x * c - m)",
     1,
     -1,
     0,
     -kInf,
     WindowUse::ZeroFactor,
     {MulRow, SubRow, Exp},
     "does not turn"},
    {"no exp: x - m", 1, -1, 0, -kInf, WindowUse::ZeroFactor, {SubRow}, "does not turn"},
    {"zero fill exp(x - m)", 1, -1, 0, 0.0, WindowUse::ZeroFactor, {SubRow, Exp}, "does not turn"},
    {"+inf fill exp(x - m)", 1, -1, 0, kInf, WindowUse::ZeroFactor, {SubRow, Exp}, "does not turn"},
    {"exp(x - m) + c",
     1,
     -1,
     0,
     -kInf,
     WindowUse::ZeroFactor,
     {SubRow, Exp, AddRow},
     "does not turn"},
    {"not affine", 1, -1, 1, -kInf, WindowUse::Overwritten, {}, "not affine"},
    {"no column in the mask",
     1,
     0,
     0,
     -kInf,
     WindowUse::Overwritten,
     {},
     "does not depend on the column"},
    {"NaN fill",
     1,
     -1,
     0,
     std::numeric_limits<double>::quiet_NaN(),
     WindowUse::Overwritten,
     {},
     "NaN"},
};

TEST(TileSkip, WholeRowRuleTable) {
  for (const WindowCase& c : kWindowCases) {
    WindowSkipRule rule{c.channel_multiplier, c.step, c.cross, c.fill, c.use, c.chain};
    WindowSkipProof p = prove_window_skip(rule);
    EXPECT_EQ(prove_window_skip_once(rule).proved, p.proved) << c.name;
    if (!c.refused) {
      EXPECT_TRUE(p.proved) << c.name << ": " << p.why;
      continue;
    }
    EXPECT_FALSE(p.proved) << c.name;
    EXPECT_NE(p.why.find(c.refused), std::string::npos) << c.name << ": " << p.why;
  }
}

// The causal window guard offset + step * c0 + slack(P, w) >= 0 fails exactly where every
// element of the window is masked: numerically over row tiles and windows.
TEST(TileSkip, WholeRowGuardIsExact) {
  WindowSkipProof causal = prove_window_skip({1, -1, 0, -kInf, WindowUse::Overwritten, {}});
  ASSERT_TRUE(causal.proved) << causal.why;
  for (std::int64_t P : {1, 64, 128})
    for (std::int64_t w : {1, 128, 512})
      for (std::int64_t offset = 0; offset < 8 * P; offset += P)
        for (std::int64_t c0 = 0; c0 < 8 * w; c0 += w) {
          bool runs = offset - c0 + causal.slack(P, w) >= 0;
          bool kept = false;
          for (std::int64_t p = 0; p < P && !kept; ++p)
            kept = offset + p - c0 >= 0;  // the smallest column of the window, f = c0
          EXPECT_EQ(runs, kept) << P << " " << w << " " << offset << " " << c0;
        }
}

}  // namespace
}  // namespace ts::verify

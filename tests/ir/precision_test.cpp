// Rounding to the hardware's formats (round_bf16, round_f32) and the interpreter's BF16 mode:
// bf16 storage of every tensor value, fp32 accumulation inside an op (PSUM), numbers as fp32.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "tilesweep/ir/dtype.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/interpreter.h"

namespace ts::ir {
namespace {

double f32_bits(std::uint32_t bits) { return static_cast<double>(std::bit_cast<float>(bits)); }

TEST(RoundBf16, NearestTiesToEven) {
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* what;
    double in, want;
  };
  const Case cases[] = {
      {"exact", 1.0, 1.0},
      {"exact negative", -3.5, -3.5},
      {"below half an ulp: down", 1 + std::ldexp(1, -9), 1.0},
      {"tie, even below: down", 1 + std::ldexp(1, -8), 1.0},
      {"tie, odd below: up", 1 + 3 * std::ldexp(1, -8), 1 + std::ldexp(1, -6)},
      {"above half an ulp: up", 1 + std::ldexp(1, -8) + std::ldexp(1, -16), 1 + std::ldexp(1, -7)},
      {"negative tie, odd below: away", -(1 + 3 * std::ldexp(1, -8)), -(1 + std::ldexp(1, -6))},
      {"tie at 255.5: 256 (255 is odd)", 255.5, 256.0},
      {"tie at 254.5: 254 (254 is even)", 254.5, 254.0},
      {"carry into the exponent", 2 - std::ldexp(1, -9), 2.0},
      {"double rounding through fp32 (an engine's fp32 result)",
       1 + std::ldexp(1, -8) + std::ldexp(1, -40), 1.0},
      {"fp32 max rounds past the bf16 range", f32_bits(0x7F7FFFFFu), inf},
      {"largest bf16 stays", f32_bits(0x7F7F0000u), f32_bits(0x7F7F0000u)},
      {"subnormal tie, even below: zero", std::ldexp(1, -134), 0.0},
      {"subnormal tie, odd below: up", 3 * std::ldexp(1, -134), std::ldexp(1, -132)},
      {"inf", -inf, -inf},
      {"zero keeps its sign", -0.0, -0.0},
  };
  for (const Case& c : cases) {
    double got = round_bf16(c.in);
    EXPECT_EQ(got, c.want) << c.what;
    EXPECT_EQ(std::signbit(got), std::signbit(c.want)) << c.what;
  }
  // A NaN whose payload sits only in the low 16 bits must not round into inf.
  EXPECT_TRUE(std::isnan(round_bf16(f32_bits(0x7F800001u))));
  EXPECT_TRUE(std::isnan(round_bf16(std::numeric_limits<double>::quiet_NaN())));
  EXPECT_EQ(round_f32(1 + std::ldexp(1, -30)), 1.0);
}

std::vector<Tensor> run(const std::string& src, sem::DimEnv dims, std::vector<Tensor> in,
                        Precision p) {
  Module m = parse_module(src, "k.py", sem::OpTable::builtin());
  return evaluate(m.kernels[0], dims, in, p);
}

Tensor filled(std::vector<std::int64_t> shape, double v) {
  Tensor t(std::move(shape));
  for (double& x : t.data) x = v;
  return t;
}

// 512 products of 2^-8 summed: fp32 accumulation (PSUM) reaches 2.0; a bf16 accumulator would
// stop at 1.0, where 1 + 2^-8 is a tie that rounds back to 1.
TEST(Bf16Precision, MatmulAccumulatesInFp32) {
  const char* src = "def f(a: bf16[M, K], b: bf16[K, N]):\n    return a @ b\n";
  sem::DimEnv dims{{"M", 1}, {"K", 512}, {"N", 1}};
  auto out =
      run(src, dims, {filled({1, 512}, 1.0), filled({512, 1}, std::ldexp(1, -8))}, Precision::BF16);
  EXPECT_EQ(out[0].data[0], 2.0);
}

// The same sum of 2^-8 and a 1 that fp32 keeps but bf16 storage cannot: the accumulator holds
// 1 + 2^-8 * 3 exactly (fp32), the stored result rounds it (to 1 + 2^-6, a tie to even).
TEST(Bf16Precision, ResultsAreStoredInBf16) {
  const char* src = "def f(a: bf16[M, K], b: bf16[K, N]):\n    return a @ b\n";
  sem::DimEnv dims{{"M", 1}, {"K", 4}, {"N", 1}};
  Tensor a = filled({1, 4}, 1.0), b = filled({4, 1}, std::ldexp(1, -8));
  b.data[0] = 1.0;
  EXPECT_EQ(run(src, dims, {a, b}, Precision::BF16)[0].data[0], 1 + std::ldexp(1, -6));
  EXPECT_EQ(run(src, dims, {a, b}, Precision::F32)[0].data[0], 1 + 3 * std::ldexp(1, -8));
}

struct ElementCase {
  const char* what;
  const char* src;
  double x, want;
};

TEST(Bf16Precision, InputsAndEveryOpRound) {
  const ElementCase cases[] = {
      // The input is rounded to bf16 when it is loaded (1 + 2^-9 -> 1).
      {"input rounds", "def f(x: f32[N]):\n    return x - 1\n", 1 + std::ldexp(1, -9), 0.0},
      // Each op's result rounds: (1 + 2^-7) * (1 + 2^-7) = 1 + 2^-6 + 2^-14 -> 1 + 2^-6, then
      // + 2^-8 is a tie that goes to 1 + 2^-6 (even): without the inner rounding the sum would
      // be above the tie and go up.
      {"every op rounds", "def f(x: f32[N]):\n    y = x * x\n    return y + 0.00390625\n",
       1 + std::ldexp(1, -7), 1 + std::ldexp(1, -6)},
      // A literal is an fp32 immediate: -1 + (1 + 2^-8 + 2^-10) = 2^-8 + 2^-10 (a bf16); a literal
      // rounded to bf16 first (1 + 2^-7) would give 2^-7.
      {"literals stay fp32", "def f(x: f32[N]):\n    return x + 1.0048828125\n", -1.0,
       std::ldexp(1, -8) + std::ldexp(1, -10)},
  };
  for (const ElementCase& c : cases) {
    Tensor x = filled({1}, c.x);
    EXPECT_EQ(run(c.src, {{"N", 1}}, {x}, Precision::BF16)[0].data[0], c.want) << c.what;
  }
}

// A reduction (here a mean) also accumulates in fp32: 256 values of 1 + 2^-7 sum to
// 256 + 2 exactly in fp32 (a bf16 accumulator would lose every 2^-7 past 2).
TEST(Bf16Precision, ReductionsAccumulateInFp32) {
  auto out = run("def f(x: f32[M, N]):\n    return mean(x, axis=1)\n", {{"M", 1}, {"N", 256}},
                 {filled({1, 256}, 1 + std::ldexp(1, -7))}, Precision::BF16);
  EXPECT_EQ(out[0].data[0], 1 + std::ldexp(1, -7));
}

}  // namespace
}  // namespace ts::ir

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

// Issue 22: a scalar parameter (`eps: f32`) combines with a tensor in the tensor's dtype, as a
// Python number does: a bf16 RMSNorm stays bf16 (its annotation holds), every value it stores at
// --precision bf16 is a bf16, and eps itself is an fp32 immediate: 1 + eps with eps = 2^-8 +
// 2^-10 rounds once, to 1 + 2^-7 (eps rounded to bf16 first would be the same here, so the
// second case adds eps to -1, where only fp32 keeps 2^-8 + 2^-10).
TEST(Bf16Precision, ScalarParametersDoNotWiden) {
  const char* norm =
      "def f(x: bf16[M, N], eps: f32 = 1e-6) -> bf16[M, N]:\n"
      "    return x * rsqrt(mean(square(x), axis=1, keepdims=True) + eps)\n";
  Module m = parse_module(norm, "k.py", sem::OpTable::builtin());
  const Kernel& k = m.kernels[0];
  EXPECT_EQ(k.nodes[k.outputs[0]].dtype, DType::BF16);
  Tensor x({2, 3});
  for (std::size_t i = 0; i < x.data.size(); ++i) x.data[i] = 0.1 + 0.37 * static_cast<double>(i);
  Tensor eps = filled({}, 1e-6);
  auto got = evaluate(k, {{"M", 2}, {"N", 3}}, {x, eps}, Precision::BF16)[0];
  auto exact = evaluate(k, {{"M", 2}, {"N", 3}}, {x, eps}, Precision::F64)[0];
  for (std::size_t i = 0; i < got.data.size(); ++i) {
    EXPECT_EQ(round_bf16(got.data[i]), got.data[i]) << i;
    EXPECT_NEAR(got.data[i], exact.data[i], std::ldexp(std::fabs(exact.data[i]), -6)) << i;
  }
  const char* add = "def f(x: bf16[N], s: f32):\n    return x + s\n";
  double s = std::ldexp(1, -8) + std::ldexp(1, -10);
  EXPECT_EQ(run(add, {{"N", 1}}, {filled({1}, 1.0), filled({}, s)}, Precision::BF16)[0].data[0],
            1 + std::ldexp(1, -7));
  EXPECT_EQ(
      run(add, {{"N", 1}}, {filled({1}, -1.0), filled({}, 1 + s)}, Precision::BF16)[0].data[0], s);
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

// f8 values are float8_e4m3 tiles (3 fraction bits): the input and every f8 result round to
// e4m3, while a matmul of f8 tiles accumulates in fp32 and rounds once, when copied out.
TEST(Bf16Precision, F8ValuesRoundToE4m3) {
  const ElementCase cases[] = {
      // 1 + 2^-5 is below e4m3's half step at 1 (2^-4): the load rounds it to 1.
      {"f8 input rounds", "def f(x: f8[N]):\n    return x - 1\n", 1 + std::ldexp(1, -5), 0.0},
      // 1.125^2 = 1.265625 -> 1.25 (steps of 2^-3 in [1, 2)); bf16 would keep 1.265625.
      {"f8 result rounds", "def f(x: f8[N]):\n    return x * x\n", 1.125, 1.25},
      // Promoted to f32 by an f32 operand: stored as bf16 like any other value of the mode.
      {"a cast leaves f8", "def f(x: f8[N]):\n    return astype(x, bf16) * 1.125\n", 1.125,
       1.265625},
  };
  for (const ElementCase& c : cases) {
    Tensor x = filled({1}, c.x);
    EXPECT_EQ(run(c.src, {{"N", 1}}, {x}, Precision::BF16)[0].data[0], c.want) << c.what;
  }
  // 18 products of 1 * 1 sum to 18 in fp32 (an e4m3, steps of 2 in [16, 32)); an f8
  // accumulator would stop at 16, as 16 + 1 = 17 is a tie that rounds to the even 16.
  auto out =
      run("def f(a: f8[M, K], b: f8[K, N]):\n    return a @ b\n", {{"M", 1}, {"K", 18}, {"N", 1}},
          {filled({1, 18}, 1.0), filled({18, 1}, 1.0)}, Precision::BF16);
  EXPECT_EQ(out[0].data[0], 18.0);
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

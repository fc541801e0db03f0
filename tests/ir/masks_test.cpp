// Comparisons, where, iota and astype (issue 22): what each computes on numbers, its shape and
// dtype, and the causal mask in the precisions eval offers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/interpreter.h"

namespace ts::ir {
namespace {

Tensor make(std::vector<std::int64_t> shape, std::vector<double> data) {
  Tensor t(std::move(shape));
  t.data = std::move(data);
  return t;
}

Kernel parse(const std::string& src) {
  return parse_module(src, "k.py", sem::OpTable::builtin()).kernels[0];
}

struct ValueCase {
  const char* body;  // the kernel's return expression over a: f32[N], b: f32[N]
  std::vector<double> want;
};

class Values : public ::testing::TestWithParam<ValueCase> {};

TEST_P(Values, OnNumbers) {
  const ValueCase& c = GetParam();
  Kernel k = parse(std::string("def f(a: f32[N], b: f32[N]):\n    return ") + c.body + "\n");
  Tensor a = make({4}, {1, 2, 3, -1}), b = make({4}, {2, 2, 1, -1});
  for (Precision p : {Precision::F64, Precision::F32, Precision::BF16}) {
    auto out = evaluate(k, {{"N", 4}}, {a, b}, p);
    ASSERT_EQ(out[0].data.size(), c.want.size()) << c.body;
    for (std::size_t i = 0; i < c.want.size(); ++i)
      EXPECT_EQ(out[0].data[i], c.want[i]) << c.body << " element " << i;
  }
}

const double kInf = std::numeric_limits<double>::infinity();

INSTANTIATE_TEST_SUITE_P(
    Masks, Values,
    ::testing::Values(ValueCase{"a < b", {1, 0, 0, 0}}, ValueCase{"a <= b", {1, 1, 0, 1}},
                      ValueCase{"a > b", {0, 0, 1, 0}}, ValueCase{"a >= b", {0, 1, 1, 1}},
                      ValueCase{"a == b", {0, 1, 0, 1}}, ValueCase{"a != b", {1, 0, 1, 0}},
                      ValueCase{"a < 2", {1, 0, 0, 1}}, ValueCase{"2 <= a", {0, 1, 1, 0}},
                      ValueCase{"(a < b) + (a == b)", {1, 1, 0, 1}},
                      ValueCase{"where(a < b, a, b)", {1, 2, 1, -1}},
                      ValueCase{"where(a > b, a, -inf)", {-kInf, -kInf, 3, -kInf}},
                      ValueCase{"where(a - 1, 5.0, b)", {2, 5, 5, 5}},
                      ValueCase{"a.astype(bf16) + b.astype(f16)", {3, 4, 4, -2}},
                      ValueCase{"astype(a, f32) * (b != 2)", {0, 0, 3, -1}}));

TEST(Iota, ShapesAndValues) {
  struct Case {
    const char* call;
    std::vector<std::int64_t> shape;
    std::vector<double> data;
  };
  for (const Case& c :
       {Case{"iota(N, axis=0)", {3, 1}, {0, 1, 2}}, Case{"iota(N, axis=1)", {1, 3}, {0, 1, 2}},
        Case{"iota(N)", {3, 1}, {0, 1, 2}}, Case{"iota(N, axis=0, ndim=1)", {3}, {0, 1, 2}},
        Case{"iota(N, axis=2)", {1, 1, 3}, {0, 1, 2}},
        Case{"iota(N, axis=1) <= iota(N, axis=0)", {3, 3}, {1, 0, 0, 1, 1, 0, 1, 1, 1}},
        Case{"iota(2 * N, axis=1) - x", {3, 6}, {}}}) {
    Kernel k = parse(std::string("def f(x: f32[N, 1]):\n    return ") + c.call + "\n");
    auto out = evaluate(k, {{"N", 3}}, {make({3, 1}, {0, 0, 0})}, Precision::F64);
    EXPECT_EQ(out[0].shape, c.shape) << c.call;
    if (!c.data.empty()) {
      EXPECT_EQ(out[0].data, c.data) << c.call;
    }
  }
}

TEST(Dtypes, ComparisonsWhereIotaAstype) {
  Kernel k = parse(
      "def f(x: bf16[N, N], y: f32[N, N]):\n"
      "    m = iota(N, axis=1) <= iota(N, axis=0)\n"
      "    w = where(m, x, -inf)\n"
      "    c = x < 0\n"
      "    u = y.astype(bf16)\n"
      "    return m, w, c, u, where(c, x, y)\n");
  std::vector<DType> want = {DType::F32, DType::BF16, DType::BF16, DType::BF16, DType::F32};
  ASSERT_EQ(k.outputs.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(k.node(k.outputs[i]).dtype, want[i]) << "output " << i;
}

TEST(Astype, RoundsToTheDtypeAtF32AndBf16ExactAtF64) {
  Kernel k = parse(
      "def f(x: f32[N]):\n"
      "    return x.astype(bf16), x.astype(f16), x.astype(f8), x.astype(f32)\n");
  Tensor x = make({4}, {1.0 + 1.0 / 512, 1.0 / 3, 300.0, 70000.0});
  auto exact = evaluate(k, {{"N", 4}}, {x}, Precision::F64);  // the reference: no dtype rounds
  for (const auto& out : exact) EXPECT_EQ(out.data, x.data);
  // (--precision bf16 stores the input in bf16 first, so 1/3 is checked at f32 only.)
  for (Precision p : {Precision::F32, Precision::BF16}) {
    auto out = evaluate(k, {{"N", 4}}, {x}, p);
    EXPECT_EQ(out[0].data[0], 1.0);                                      // bf16: 8 bits
    EXPECT_EQ(out[2].data[2], 288.0);                                    // e4m3: 4 bits
    EXPECT_EQ(out[1].data[3], std::numeric_limits<double>::infinity());  // past f16's range
    if (p == Precision::BF16) continue;
    EXPECT_EQ(out[1].data[1], 0.333251953125);  // f16: 11 bits
    EXPECT_EQ(out[3].data[1], static_cast<double>(1.0f / 3));
  }
}

// The causal mask stays exact in bf16 runs: iota values are f32 (an index past 256 has no bf16
// value), so row i of causal attention sees exactly keys 0..i. Row 0 is v's row 0.
TEST(CausalMask, ExactInBf16AtLongSequences) {
  Kernel k = parse(
      "def f(s: bf16[S, S], v: bf16[S, 1]) -> bf16[S, 1]:\n"
      "    m = where(iota(S, axis=1) <= iota(S, axis=0), s, -inf)\n"
      "    e = exp(m - max(m, axis=1, keepdims=True))\n"
      "    return (e / sum(e, axis=1, keepdims=True)) @ v\n");
  const std::int64_t S = 300;
  Tensor s({S, S}), v({S, 1});
  for (std::int64_t i = 0; i < S * S; ++i) s.data[i] = 0;  // uniform attention over visible keys
  for (std::int64_t i = 0; i < S; ++i) v.data[i] = static_cast<double>(i % 7);
  for (Precision p : {Precision::F64, Precision::BF16}) {
    auto out = evaluate(k, {{"S", S}}, {s, v}, p);
    for (std::int64_t i : {0, 1, 255, 256, 257, 299}) {
      double mean = 0;
      for (std::int64_t j = 0; j <= i; ++j) mean += static_cast<double>(j % 7);
      mean /= static_cast<double>(i + 1);
      EXPECT_NEAR(out[0].data[i], mean, p == Precision::F64 ? 1e-12 : 0.02 * (1 + mean))
          << "row " << i;
    }
  }
}

}  // namespace
}  // namespace ts::ir

#include "tilesweep/ir/interpreter.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tilesweep/ir/frontend.h"

namespace ts::ir {
namespace {

Tensor make(std::vector<std::int64_t> shape, std::vector<double> data) {
  Tensor t(std::move(shape));
  t.data = std::move(data);
  return t;
}

std::vector<Tensor> run(const std::string& src, sem::DimEnv dims, std::vector<Tensor> in,
                        Precision p = Precision::F64) {
  Module m = parse_module(src, "k.py", sem::OpTable::builtin());
  return evaluate(m.kernels[0], dims, in, p);
}

TEST(Interpreter, ElementwiseAndBroadcast) {
  auto out = run("def f(x: f32[M, N], b: f32[N]):\n    return relu(x - b)\n", {{"M", 2}, {"N", 2}},
                 {make({2, 2}, {1, 2, 3, 4}), make({2}, {2, 2})});
  EXPECT_EQ(out[0].data, (std::vector<double>{0, 0, 1, 2}));
}

TEST(Interpreter, Matmul) {
  auto out =
      run("def f(a: f32[M, K], b: f32[K, N]):\n    return a @ b\n", {{"M", 2}, {"K", 3}, {"N", 1}},
          {make({2, 3}, {1, 2, 3, 4, 5, 6}), make({3, 1}, {1, 0, -1})});
  EXPECT_EQ(out[0].shape, (std::vector<std::int64_t>{2, 1}));
  EXPECT_EQ(out[0].data, (std::vector<double>{-2, -2}));
}

TEST(Interpreter, SoftmaxRowsSumToOne) {
  auto out =
      run("def f(x: f32[M, N]):\n    e = exp(x - max(x, axis=1, keepdims=True))\n    return e / "
          "sum(e, axis=1, keepdims=True)\n",
          {{"M", 2}, {"N", 3}}, {make({2, 3}, {1, 2, 3, -1, 0, 100})});
  EXPECT_NEAR(out[0].data[0] + out[0].data[1] + out[0].data[2], 1.0, 1e-12);
  EXPECT_NEAR(out[0].data[5], 1.0, 1e-12);
  EXPECT_NEAR(out[0].data[2] / out[0].data[1], std::exp(1.0), 1e-12);
}

TEST(Interpreter, LayoutOps) {
  Tensor x = make({2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(run("def f(x: f32[M, N]):\n    return x.T\n", {{"M", 2}, {"N", 3}}, {x})[0].data,
            (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(
      run("def f(x: f32[M, N]):\n    return reshape(x, (N, M))\n", {{"M", 2}, {"N", 3}}, {x})[0]
          .data,
      (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(run("def f(x: f32[M, N]):\n    return x[:, 1::2]\n", {{"M", 2}, {"N", 3}}, {x})[0].data,
            (std::vector<double>{1, 4}));
  EXPECT_EQ(run("def f(x: f32[M, N]):\n    return concat((x[:, 2:], x[:, :2]), axis=1)\n",
                {{"M", 2}, {"N", 3}}, {x})[0]
                .data,
            (std::vector<double>{2, 0, 1, 5, 3, 4}));
  EXPECT_EQ(
      run("def f(x: f32[M, N]):\n    return repeat(x, 2, axis=0)\n", {{"M", 2}, {"N", 3}}, {x})[0]
          .data,
      (std::vector<double>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  EXPECT_EQ(run("def f(x: f32[M, N]):\n    return broadcast_to(x[0], (2, N))\n",
                {{"M", 2}, {"N", 3}}, {x})[0]
                .data,
            (std::vector<double>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(
      run("def f(x: f32[M, N]):\n    return cumsum(x, axis=1)\n", {{"M", 2}, {"N", 3}}, {x})[0]
          .data,
      (std::vector<double>{0, 1, 3, 3, 7, 12}));
}

TEST(Interpreter, ScanIsALinearRecurrence) {
  // s0 = b0; s1 = a1 s0 + b1; s2 = a2 s1 + b2
  auto out = run("def f(a: f32[N], b: f32[N]):\n    return scan(a, b, axis=0)\n", {{"N", 3}},
                 {make({3}, {5, 2, 3}), make({3}, {1, 1, 1})});
  EXPECT_EQ(out[0].data, (std::vector<double>{1, 3, 10}));
}

TEST(Interpreter, Float32RoundsEveryNode) {
  auto f64 = run("def f(x: f32[N]):\n    return x + 1e-9\n", {{"N", 1}}, {make({1}, {1.0})});
  auto f32 = run("def f(x: f32[N]):\n    return x + 1e-9\n", {{"N", 1}}, {make({1}, {1.0})},
                 Precision::F32);
  EXPECT_NE(f64[0].data[0], 1.0);
  EXPECT_EQ(f32[0].data[0], 1.0);
}

TEST(Interpreter, ErrorsNameTheProblem) {
  auto error = [](const std::string& src, sem::DimEnv dims, std::vector<Tensor> in) {
    try {
      run(src, dims, in);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("def f(x: f32[N, 2 * N]):\n    return x\n", {{"N", 2}},
                  {make({2, 3}, {0, 0, 0, 0, 0, 0})}),
            "error: input 'x' has shape [2, 3] but kernel 'f' expects [N, 2 * N] = [2, 4]");
  EXPECT_EQ(error("def f(x: f32[N]):\n    return x[: N // 2] + x[N // 2 :]\n", {{"N", 3}},
                  {make({3}, {0, 0, 0})}),
            "k.py:2:24: error: kernel 'f' requires N // 2 == N - N // 2 (operands of 'add' must "
            "broadcast at line 2), which fails for N=3: N // 2 = 1 and N - N // 2 = 2");
  // A relation between dims (C == D * H) is checked where dims are bound, at the op implying it.
  EXPECT_EQ(error("def f(x: f32[T, C], g: f32[H, D]):\n    return reshape(x, (T, H, D)) * g\n",
                  {{"T", 1}, {"C", 5}, {"H", 2}, {"D", 2}},
                  {make({1, 5}, {0, 0, 0, 0, 0}), make({2, 2}, {0, 0, 0, 0})}),
            "k.py:2:12: error: kernel 'f' requires C == D * H ('reshape' requires (numel(S) == "
            "numel(T)) at line 2), which fails for C=5, D=2, H=2, T=1: C = 5 and D * H = 4");
}

TEST(Interpreter, BindDimsFromInputs) {
  Module m = parse_module("def f(x: f32[M, N]):\n    return x\n", "k.py", sem::OpTable::builtin());
  Tensor x({4, 5});
  sem::DimEnv env = bind_dims(m.kernels[0], {}, {&x});
  EXPECT_EQ(env.at("M"), 4);
  EXPECT_EQ(env.at("N"), 5);
  EXPECT_THROW(bind_dims(m.kernels[0], {{"M", 3}}, {&x}), UserError);
  EXPECT_THROW(bind_dims(m.kernels[0], {}, {nullptr}), UserError);
}

}  // namespace
}  // namespace ts::ir

// Tile ops name their tile dims so that equal tile forms meet in the synthesis cache and
// unequal tiles never share a name, whatever the kernel's dims are called: an element-wise op
// or a one-operand op by position, a matmul by role (rows, contraction, columns).
#include "tilesweep/lower/tile_op.h"

#include <gtest/gtest.h>

#include <string>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/graph_printer.h"

namespace ts::lower {
namespace {

struct Case {
  const char* name;
  const char* source;  // a kernel whose last op is the one tiled
  const char* tile;    // its tile op's signature
};

class TileOpCase : public ::testing::TestWithParam<Case> {};

TEST_P(TileOpCase, NamesTileDims) {
  const Case& c = GetParam();
  ir::Module m = ir::parse_module(c.source, "t.py", sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  std::string why;
  auto t = tile_op(k, k.outputs.front(), &why);
  ASSERT_TRUE(t) << why;
  EXPECT_EQ(ir::kernel_signature(t->kernel), c.tile);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, TileOpCase,
    ::testing::Values(
        Case{"matmul", "def f(x: f32[M, K], y: f32[K, N]) -> f32[M, N]:\n    return matmul(x, y)\n",
             "matmul(x: f32[P, F], y: f32[F, K]) -> f32[P, K]"},
        // Attention's scores times values: an N x N left-hand side, N rows and N contracted.
        Case{"matmul_square_lhs",
             "def f(p: f32[N, N], v: f32[N, D]) -> f32[N, D]:\n    return matmul(p, v)\n",
             "matmul(x: f32[P, F], y: f32[F, K]) -> f32[P, K]"},
        // Queries times keys: N rows out, N columns out.
        Case{"matmul_square_out",
             "def f(q: f32[N, D], k: f32[D, N]) -> f32[N, N]:\n    return matmul(q, k)\n",
             "matmul(x: f32[P, F], y: f32[F, K]) -> f32[P, K]"},
        Case{"matmul_batched",
             "def f(q: f32[B, N, D], k: f32[B, D, N]) -> f32[B, N, N]:\n    return matmul(q, k)\n",
             "matmul(x: f32[P, F], y: f32[F, K]) -> f32[P, K]"},
        Case{"matmul_vector",
             "def f(x: f32[M, K], y: f32[K, 1]) -> f32[M, 1]:\n    return matmul(x, y)\n",
             "matmul(x: f32[P, F], y: f32[F, 1]) -> f32[P, 1]"},
        Case{"exp_square", "def f(s: f32[N, N]) -> f32[N, N]:\n    return exp(s)\n",
             "exp(x: f32[P, F]) -> f32[P, F]"},
        Case{"sub_row_scalar",
             "def f(s: f32[N, N], m: f32[N, 1]) -> f32[N, N]:\n    return s - m\n",
             "sub(x: f32[P, F], y: f32[P, 1]) -> f32[P, F]"},
        Case{"sum_square",
             "def f(s: f32[N, N]) -> f32[N, 1]:\n    return sum(s, axis=1, keepdims=True)\n",
             "sum(x: f32[P, F]) -> f32[P, 1]"},
        Case{"max_rows",
             "def f(s: f32[M, N]) -> f32[M, 1]:\n    return max(s, axis=1, keepdims=True)\n",
             "max(x: f32[P, F]) -> f32[P, 1]"},
        Case{"sum_across_partitions",
             "def f(s: f32[N, N]) -> f32[1, N]:\n    return sum(s, axis=0, keepdims=True)\n",
             "sum(x: f32[P, F]) -> f32[1, F]"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ts::lower

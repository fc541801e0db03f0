#include "tilesweep/ir/frontend.h"

#include <gtest/gtest.h>

#include "tilesweep/ir/graph_printer.h"

namespace ts::ir {
namespace {

std::string signature(const std::string& src) {
  try {
    Module m = parse_module(src, "k.py", sem::OpTable::builtin());
    std::string s;
    for (const auto& k : m.kernels) s += (s.empty() ? "" : "; ") + kernel_signature(k);
    return s;
  } catch (const UserError& e) {
    return e.what();
  }
}

TEST(Frontend, InfersSignatures) {
  struct Case {
    const char* src;
    const char* sig;
  } cases[] = {
      {"def f(x: f32[M, K], w: f32[K, N]) -> f32[M, N]:\n    return x @ w\n",
       "f(x: f32[M, K], w: f32[K, N]) -> f32[M, N]"},
      {"def f(x: f32[M, N]):\n    return x.T\n", "f(x: f32[M, N]) -> f32[N, M]"},
      {"def f(x: bf16[M, N], y: f32[N]):\n    return x * y\n",
       "f(x: bf16[M, N], y: f32[N]) -> f32[M, N]"},
      {"def f(x: bf16[M, N]):\n    return x * 2.0 + 1\n", "f(x: bf16[M, N]) -> bf16[M, N]"},
      {"def f(x: f32[M, 2 * H]):\n    return x[:, :H] * x[:, H:]\n",
       "f(x: f32[M, 2 * H]) -> f32[M, H]"},
      {"def f(x: f32[M, N]):\n    a, b = x + 1, x - 1\n    return a, b\n",
       "f(x: f32[M, N]) -> (f32[M, N], f32[M, N])"},
      {"def g(t, s=2.0):\n    return t * s\n\ndef f(x: f32[N]):\n    return g(x, s=3)\n",
       "f(x: f32[N]) -> f32[N]"},
      {"def f(x: f32[M, N]):\n    return sum(x, axis=0, keepdims=True) / M\n",
       "f(x: f32[M, N]) -> f32[1, N]"},
      {"def f(x: f32[M, N]):\n    return x[1]\n", "f(x: f32[M, N]) -> f32[N]"},
      {"def f(x: f32[M, N], y: f32[M, K]):\n    return concat((x, y, x), axis=1)\n",
       "f(x: f32[M, N], y: f32[M, K]) -> f32[M, K + 2 * N]"},
      {"def a(x: f32[N]):\n    return exp(x)\n\ndef b(y: f32[M, M]):\n    return y ** 2\n",
       "a(x: f32[N]) -> f32[N]; b(y: f32[M, M]) -> f32[M, M]"},
      {"def f(x: f32[N], eps: f32 = 1e-5):\n    \"\"\"doc\"\"\"\n    return x + eps\n",
       "f(x: f32[N], eps: f32 = 1e-05) -> f32[N]"},
      // A scalar parameter is weak, like a literal: it takes the tensor's dtype (issue 22).
      {"def f(x: bf16[M, N], eps: f32 = 1e-6):\n"
       "    return x * rsqrt(mean(square(x), axis=1, keepdims=True) + eps)\n",
       "f(x: bf16[M, N], eps: f32 = 1e-06) -> bf16[M, N]"},
      {"def f(x: bf16[N], s: f32):\n    return x * (s * 2.0 + s)\n",
       "f(x: bf16[N], s: f32) -> bf16[N]"},
      {"def f(x: f16[N], s: f32, t: bf16):\n    return x * s + t\n",
       "f(x: f16[N], s: f32, t: bf16) -> f16[N]"},
      // Scalars only: their declared dtypes promote (a literal does not count).
      {"def f(a: bf16, b: f32):\n    return a * b\n", "f(a: bf16, b: f32) -> f32[]"},
      {"def f(a: bf16):\n    return a * 2.0\n", "f(a: bf16) -> bf16[]"},
      // A tensor of another dtype still promotes.
      {"def f(x: bf16[N], g: f32[N], s: f32):\n    return x * g + s\n",
       "f(x: bf16[N], g: f32[N], s: f32) -> f32[N]"},
  };
  for (const auto& c : cases) EXPECT_EQ(signature(c.src), c.sig) << c.src;
}

// Relations between dims that the kernel implies are preconditions, stated in solved form, with
// the line of the op that implies them; an equality no dims satisfy is an error (tests/errors).
TEST(Frontend, RelationsBetweenDimsArePreconditions) {
  struct Case {
    const char* src;
    const char* requires_;  // every precondition as "lhs cmp rhs @line", joined by "; "
  } cases[] = {
      // A reshape of [T, C] to heads: C == D * H.
      {"def f(x: f32[T, C], g: f32[H, D]):\n    return reshape(x, (T, H, D)) * g\n",
       "C == D * H @2"},
      // A gate|up weight split in halves: N == 2 * F (and the slice bound F <= N).
      {"def f(x: f32[T, K], w: f32[K, N], wd: f32[F, K]):\n    h = x @ w\n"
       "    return (silu(h[:, :F]) * h[:, F:]) @ wd\n",
       "F <= N @3; N == 2 * F @3"},
      // The same relation met twice is stated once.
      {"def f(x: f32[T, C], y: f32[T, H, D]):\n    a = reshape(x, (T, H, D)) + y\n"
       "    return reshape(y, (T, C)) + x\n",
       "C == D * H @2"},
      // A declared return shape the preconditions imply.
      {"def f(x: f32[T, C], g: f32[H, D]) -> f32[T, H * D]:\n"
       "    return reshape(reshape(x, (T, H, D)) * g, (T, C))\n",
       "C == D * H @2"},
      // Concat of the halves of a fused weight's output.
      {"def f(a: f32[T, F], b: f32[T, F], w: f32[N, K]):\n"
       "    return concat((a, b), axis=1) @ w\n",
       "N == 2 * F @2"},
  };
  for (const auto& c : cases) {
    Module m = parse_module(c.src, "k.py", sem::OpTable::builtin());
    std::string got;
    for (const auto& p : m.kernels[0].preconditions)
      got += (got.empty() ? "" : "; ") + p.str() + " @" + std::to_string(p.loc.line);
    EXPECT_EQ(got, c.requires_) << c.src;
  }
}

TEST(Frontend, NodesCarrySourceLocations) {
  Module m = parse_module("def f(x: f32[N]):\n    y = exp(x)\n    return y + 1\n", "k.py",
                          sem::OpTable::builtin());
  const Kernel& k = m.kernels[0];
  const Node& out = k.nodes[k.outputs[0]];
  EXPECT_EQ(out.op, "add");
  EXPECT_EQ(out.loc.line, 3);
  EXPECT_EQ(out.loc.col, 14);
  EXPECT_EQ(k.nodes[out.inputs[0]].label, "y");
}

TEST(Frontend, ModuleKernelLookup) {
  Module m = parse_module("def a(x: f32[N]):\n    return x\n\ndef b(x: f32[N]):\n    return x\n",
                          "k.py", sem::OpTable::builtin());
  EXPECT_EQ(m.kernel("b").name, "b");
  try {
    m.kernel("");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "error: 'k.py' has 2 kernels (a, b); choose one with --kernel");
  }
}

}  // namespace
}  // namespace ts::ir

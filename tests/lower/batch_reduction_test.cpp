// Reductions along a batch dim (frame.h, reduces_batch; issue 17, loop-carried accumulation):
// which reductions qualify, their step tile op (the reducer's element-wise combine), and the
// step's soundness proved by Z3 for every reducer with one: the reduction over A + B slices is
// the reduction of the two parts' reductions, and the reduction of two stacked slices is the
// combine of the two.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/graph_printer.h"
#include "tilesweep/lower/frame.h"
#include "tilesweep/lower/split_reduction.h"
#include "tilesweep/lower/tile_op.h"
#include "tilesweep/verify/prove.h"

namespace ts::lower {
namespace {

ir::Kernel parse(const std::string& src, const char* name) {
  return ir::parse_module(src, "t.py", sem::OpTable::builtin()).kernel(name);
}

struct Case {
  const char* name;
  const char* source;  // a kernel whose last op is the reduction
  bool batch;          // reduces_batch
  const char* step;    // its tile op's signature ("": none)
};

class BatchReduction : public ::testing::TestWithParam<Case> {};

TEST_P(BatchReduction, QualifiesAndSteps) {
  const Case& c = GetParam();
  ir::Kernel k = parse(c.source, "f");
  int r = k.outputs.front();
  EXPECT_EQ(reduces_batch(k, r), c.batch);
  if (!c.batch) return;
  EXPECT_TRUE(find_frame(k, r));
  auto t = tile_op(k, r);
  EXPECT_EQ(t ? ir::kernel_signature(t->kernel) : "", c.step);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, BatchReduction,
    ::testing::Values(
        Case{"sum_over_s", "def f(x: f32[S, C, M]) -> f32[C, M]:\n    return sum(x, axis=0)\n",
             true, "add(x: f32[P, F], y: f32[P, F]) -> f32[P, F]"},
        Case{"max_keepdims",
             "def f(x: f32[S, C, M]) -> f32[1, C, M]:\n    return max(x, axis=0, keepdims=True)\n",
             true, "maximum(x: f32[P, F], y: f32[P, F]) -> f32[P, F]"},
        Case{"min_inner_batch",
             "def f(x: f32[B, S, C, M]) -> f32[B, C, M]:\n    return min(x, axis=1)\n", true,
             "minimum(x: f32[P, F], y: f32[P, F]) -> f32[P, F]"},
        // a mean has no element-wise combine: it qualifies, but has no step
        Case{"mean_over_s", "def f(x: f32[S, C, M]) -> f32[C, M]:\n    return mean(x, axis=0)\n",
             true, ""},
        // across partitions, and along an outer batch dim: not a carried reduction
        Case{"sum_rows", "def f(x: f32[S, C, M]) -> f32[S, M]:\n    return sum(x, axis=1)\n", false,
             ""},
        Case{"sum_outer_batch",
             "def f(x: f32[B, S, C, M]) -> f32[S, C, M]:\n    return sum(x, axis=0)\n", false, ""}),
    [](const auto& info) { return std::string(info.param.name); });

// The step is sound for every reducer with an element-wise combine.
class BatchStep : public ::testing::TestWithParam<const char*> {};

TEST_P(BatchStep, IsProved) {
  std::string op = GetParam();
  ir::Kernel probe = parse(fmt::format("def f(x: f32[S, C, M]) -> f32[C, M]:\n"
                                       "    return {}(x, axis=0)\n",
                                       op),
                           "f");
  auto combine = combine_op(probe.nodes[probe.outputs.front()]);
  ASSERT_TRUE(combine);
  std::string whole = fmt::format(
      "def w(x: f32[A + B, P, F]) -> f32[P, F]:\n    return {0}(x, axis=0)\n"
      "def p(x: f32[A + B, P, F]) -> f32[P, F]:\n"
      "    return {0}(concat(({0}(x[:A], axis=0, keepdims=True), {0}(x[A:], axis=0, "
      "keepdims=True)), axis=0), axis=0)\n",
      op);
  ir::Module parts = ir::parse_module(whole, "split.py", sem::OpTable::builtin());
  verify::Verdict split = verify::prove_equivalent(parts.kernel("w"), parts.kernel("p"));
  EXPECT_TRUE(split.proved()) << op << ": " << split.reason;
  std::string two = fmt::format(
      "def s(a: f32[P, F], b: f32[P, F]) -> f32[P, F]:\n"
      "    return {}(concat((reshape(a, (1, P, F)), reshape(b, (1, P, F))), axis=0), axis=0)\n"
      "def c(a: f32[P, F], b: f32[P, F]) -> f32[P, F]:\n    return {}(a, b)\n",
      op, *combine);
  ir::Module step = ir::parse_module(two, "step.py", sem::OpTable::builtin());
  verify::Verdict v = verify::prove_equivalent(step.kernel("s"), step.kernel("c"));
  EXPECT_TRUE(v.proved()) << op << " step by " << *combine << ": " << v.reason;
}

INSTANTIATE_TEST_SUITE_P(Reducers, BatchStep, ::testing::Values("sum", "max", "min"));

}  // namespace
}  // namespace ts::lower

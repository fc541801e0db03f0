// Row-step folding (row_step_fold.h): which inputs fold and into what slices, and the Z3 proofs
// that each folded kernel (its proof form: the parameter reshaped to [M / s, s * N]) equals the
// original.
#include "tilesweep/lower/row_step_fold.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/verify/prove.h"

namespace ts::lower {
namespace {

ir::Kernel parse(const std::string& source) {
  return ir::parse_module(source, "t.py", sem::OpTable::builtin()).kernels.front();
}

struct Case {
  const char* name;
  const char* source;
  // Each slice of the lowering form as "begin:end:step,begin:end:step" in node order; empty:
  // the kernel does not fold.
  std::vector<std::string> slices;
};

std::string slice_text(const ir::Node& n) {
  auto b = std::get<std::vector<sem::Dim>>(n.attrs.at("begin"));
  auto e = std::get<std::vector<sem::Dim>>(n.attrs.at("end"));
  auto s = std::get<std::vector<sem::Dim>>(n.attrs.at("step"));
  std::string out;
  for (std::size_t d = 0; d < b.size(); ++d)
    out += (d ? "," : "") + std::to_string(b[d].value()) + ":" + std::to_string(e[d].value()) +
           ":" + std::to_string(s[d].value());
  return out;
}

class RowStepFold : public ::testing::TestWithParam<Case> {};

TEST_P(RowStepFold, FoldsAndProvesEqual) {
  const Case& c = GetParam();
  ir::Kernel k = parse(c.source);
  auto lowering = fold_row_steps(k, {});
  auto proof = fold_row_steps(k, {}, FoldForm::Proof);
  if (c.slices.empty()) {
    EXPECT_FALSE(lowering.has_value());
    EXPECT_FALSE(proof.has_value());
    return;
  }
  ASSERT_TRUE(lowering.has_value());
  ASSERT_TRUE(proof.has_value());
  // The lowering form keeps every node at its index (the instruction choices carry over), the
  // outputs' shapes, and reads the folded inputs through the expected slices.
  ASSERT_EQ(lowering->nodes.size(), k.nodes.size());
  std::vector<std::string> slices;
  for (std::size_t i = 0; i < k.nodes.size(); ++i) {
    EXPECT_EQ(lowering->nodes[i].op, k.nodes[i].op);
    if (k.nodes[i].op == "slice") slices.push_back(slice_text(lowering->nodes[i]));
  }
  EXPECT_EQ(slices, c.slices);
  for (std::size_t o = 0; o < k.outputs.size(); ++o)
    EXPECT_EQ(lowering->nodes[lowering->outputs[o]].shape, k.nodes[k.outputs[o]].shape);
  verify::Verdict v = verify::prove_equivalent(k, *proof);
  EXPECT_EQ(v.kind, verify::VerdictKind::Equivalent) << v.reason;
}

// The proof can fail: the view's slices written out by hand prove equal to maxpool, and with
// the first slice reading the other row of the pair (columns 6:12:2 of the view instead of
// 0:6:2, the same shape) they are refused.
TEST(RowStepFold, AWrongViewSliceIsRefused) {
  const std::string body =
      "def f(x: f32[4, 6]) -> f32[2, 3]:\n"
      "    top = maximum(x[0::2, 0::2], x[0::2, 1::2])\n"
      "    bottom = maximum(x[1::2, 0::2], x[1::2, 1::2])\n"
      "    return maximum(top, bottom)\n";
  auto view = [](const char* first) {
    return parse(std::string("def f(x: f32[4, 6]) -> f32[2, 3]:\n"
                             "    v = reshape(x, (2, 12))\n"
                             "    top = maximum(v[:, ") +
                 first +
                 "], v[:, 1:6:2])\n"
                 "    bottom = maximum(v[:, 6:12:2], v[:, 7:12:2])\n"
                 "    return maximum(top, bottom)\n");
  };
  ir::Kernel k = parse(body);
  EXPECT_EQ(verify::prove_equivalent(k, view("0:6:2")).kind, verify::VerdictKind::Equivalent);
  EXPECT_EQ(verify::prove_equivalent(k, view("6:12:2")).kind, verify::VerdictKind::NotEquivalent);
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, RowStepFold,
    ::testing::Values(
        // maxpool at [4, 6]: x viewed as [2, 12], the row pair side by side.
        Case{"maxpool",
             "def f(x: f32[4, 6]) -> f32[2, 3]:\n"
             "    top = maximum(x[0::2, 0::2], x[0::2, 1::2])\n"
             "    bottom = maximum(x[1::2, 0::2], x[1::2, 1::2])\n"
             "    return maximum(top, bottom)\n",
             {"0:2:1,0:6:2", "0:2:1,1:6:2", "0:2:1,6:12:2", "0:2:1,7:12:2"}},
        // A row step of 3 with column bounds, a row range that ends before the last group, and
        // an input read whole beside it (not folded).
        Case{"step3",
             "def f(x: f32[9, 4], y: f32[2, 2]) -> f32[2, 2]:\n"
             "    return x[1:6:3, 1:3] + x[2:4:3, 0:4:2] * y\n",
             {"0:2:1,5:7:1", "0:1:1,8:12:2"}},
        // Row steps that differ, a step that does not divide the rows, a slice with step 1, an
        // input read elsewhere too: no fold.
        Case{"mixed_steps",
             "def f(x: f32[6, 4]) -> f32[2, 4]:\n    return x[0::3, :] + x[0::2, :][0:2, :]\n",
             {}},
        Case{"not_dividing", "def f(x: f32[5, 4]) -> f32[3, 4]:\n    return exp(x[0::2, :])\n", {}},
        Case{"unit_step", "def f(x: f32[4, 4]) -> f32[2, 4]:\n    return exp(x[0:2, :])\n", {}},
        Case{"read_whole",
             "def f(x: f32[4, 4]) -> f32[2, 4]:\n    return x[0::2, :] + sum(x, axis=0, "
             "keepdims=True)[:, :]\n",
             {}}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ts::lower

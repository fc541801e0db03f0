// Partition folding (partition_fold.h): which kernels fold and by how much, the proofs that the
// fold keeps their semantics (Z3: every op fold_partitions accepts as element-wise commutes with
// the reshape; whole kernels, slices and concats included, equal their folded forms), and the
// folded programs on numbers against the reference.
#include "tilesweep/lower/partition_fold.h"

#include <gtest/gtest.h>

#include <string>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/graph_edit.h"
#include "tilesweep/verify/prove.h"

namespace ts::lower {
namespace {

ir::Kernel parse(const std::string& source) {
  return ir::parse_module(source, "t.py", sem::OpTable::builtin()).kernels.front();
}

struct FoldCase {
  const char* name;
  const char* source;
  int partitions;
  int folded_rows;  // rows of the first computed value once folded; 0: the kernel does not fold
};

class FoldCases : public ::testing::TestWithParam<FoldCase> {};

int first_computed_rows(const ir::Kernel& k) {
  for (const auto& n : k.nodes)
    if (n.spec && !n.inputs.empty() && n.op != "slice" && n.op != "reshape" && n.shape.size() == 2)
      return static_cast<int>(n.shape[0].value());
  return -1;
}

TEST_P(FoldCases, FoldsAndProvesEqual) {
  const FoldCase& c = GetParam();
  ir::Kernel k = parse(c.source);
  auto lowering = fold_partitions(k, {}, c.partitions);
  auto proof = fold_partitions(k, {}, c.partitions, FoldForm::Proof);
  if (c.folded_rows == 0) {
    EXPECT_FALSE(lowering.has_value());
    EXPECT_FALSE(proof.has_value());
    return;
  }
  ASSERT_TRUE(lowering.has_value());
  ASSERT_TRUE(proof.has_value());
  EXPECT_EQ(first_computed_rows(*lowering), c.folded_rows);
  // The lowering form keeps every node at its index (the instruction choices carry over) and
  // ends each output with a reshape back to the original shape.
  ASSERT_EQ(lowering->nodes.size(), k.nodes.size() + k.outputs.size());
  for (std::size_t i = 0; i < k.nodes.size(); ++i) EXPECT_EQ(lowering->nodes[i].op, k.nodes[i].op);
  for (std::size_t o = 0; o < k.outputs.size(); ++o) {
    EXPECT_EQ(lowering->nodes[lowering->outputs[o]].op, "reshape");
    EXPECT_EQ(lowering->nodes[lowering->outputs[o]].shape, k.nodes[k.outputs[o]].shape);
  }
  verify::Verdict v = verify::prove_equivalent(k, *proof);
  EXPECT_EQ(v.kind, verify::VerdictKind::Equivalent) << v.reason;
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, FoldCases,
    ::testing::Values(
        FoldCase{"rope",
                 "def f(x: f32[8, 6], c: f32[4, 6], s: f32[4, 6]) -> f32[8, 6]:\n"
                 "    x0 = x[:4, :]\n    x1 = x[4:, :]\n"
                 "    return concat((x0 * c - x1 * s, x0 * s + x1 * c), axis=0)\n",
                 8, 8},
        FoldCase{"silu_quarter",
                 "def f(x: f32[2, 12]) -> f32[2, 12]:\n    return x / (1 + exp(-x))\n", 8, 8},
        FoldCase{"scalar_param",
                 "def f(x: f32[4, 6], a: f32) -> f32[4, 6]:\n    return a * x + sqrt(x * x)\n", 8,
                 8},
        FoldCase{"middle_rows",
                 "def f(x: f32[8, 12], y: f32[2, 12]) -> f32[2, 12]:\n    return x[2:4, :] * y\n",
                 8, 8},
        FoldCase{"already_full", "def f(x: f32[8, 6]) -> f32[8, 6]:\n    return exp(x)\n", 8, 0},
        FoldCase{"full_tiles", "def f(x: f32[16, 6]) -> f32[16, 6]:\n    return exp(x)\n", 8, 0},
        // more rows than partitions, not a multiple of them (adamw's 10,944 rows on 128): folded
        // by the least factor that fills every tile (12 rows -> 24 = 3 tiles of 8; main e415cd4
        // refused every kernel with as many rows as partitions or more)
        FoldCase{"ragged_rows",
                 "def f(x: f32[12, 4], y: f32[12, 4]) -> f32[12, 4]:\n    return x * y - x\n", 8,
                 24},
        // rows 3 of 8: factor 8 (was refused: 8 / 3 is not whole)
        FoldCase{"odd_rows", "def f(x: f32[3, 16]) -> f32[3, 16]:\n    return exp(x)\n", 8, 24},
        FoldCase{"columns_do_not_divide", "def f(x: f32[4, 5]) -> f32[4, 5]:\n    return exp(x)\n",
                 8, 0},
        FoldCase{"column_slice",
                 "def f(x: f32[4, 6]) -> f32[4, 3]:\n    return x[:, :3] * x[:, 3:]\n", 8, 0},
        FoldCase{"broadcast_row",
                 "def f(x: f32[4, 6], b: f32[1, 6]) -> f32[4, 6]:\n    return x + b\n", 8, 0},
        FoldCase{"row_reduction",
                 "def f(x: f32[4, 6]) -> f32[4, 1]:\n    return sum(x, axis=1, keepdims=True)\n", 8,
                 0},
        FoldCase{"transpose", "def f(x: f32[4, 4]) -> f32[4, 4]:\n    return exp(x.T)\n", 8, 0},
        FoldCase{"matmul", "def f(x: f32[4, 4], y: f32[4, 4]) -> f32[4, 4]:\n    return x @ y\n", 8,
                 0}),
    [](const auto& info) { return std::string(info.param.name); });

// Every op of the op table that fold_partitions accepts as element-wise commutes with the fold:
// op(reshape(a), reshape(b), ..) == reshape(op(a, b, ..)), proved with Z3 at [4, 6] -> [8, 3].
TEST(PartitionFold, EveryAcceptedOpCommutesWithTheFold) {
  const sem::OpTable& ops = sem::OpTable::builtin();
  int proved = 0;
  std::string accepted;
  for (const std::string& name : ops.names()) {
    const sem::OpSpec& spec = *ops.find(name);
    if (spec.operands.empty()) continue;
    ir::Kernel k;
    k.name = "op";
    std::vector<int> inputs;
    for (std::size_t i = 0; i < spec.operands.size(); ++i) {
      ir::Param p;
      p.name = "t" + std::to_string(i);
      p.shape = {4, 6};
      ir::Node n;
      n.op = "input";
      n.shape = p.shape;
      n.param = static_cast<int>(i);
      n.label = p.name;
      p.node = static_cast<int>(k.nodes.size());
      inputs.push_back(p.node);
      k.nodes.push_back(std::move(n));
      k.params.push_back(std::move(p));
    }
    try {
      k.outputs = {ir::add_op(k, spec, inputs, {}, {})};
    } catch (const UserError&) {
      continue;  // needs attributes or other shapes: not an element-wise op over [4, 6]
    }
    if (!folds_elementwise(k, k.outputs[0])) continue;
    auto folded = fold_partitions(k, {}, 8, FoldForm::Proof);
    ASSERT_TRUE(folded.has_value()) << name;
    verify::Verdict v = verify::prove_equivalent(k, *folded);
    EXPECT_EQ(v.kind, verify::VerdictKind::Equivalent) << name << ": " << v.reason;
    ++proved;
    accepted += " " + name;
  }
  EXPECT_GE(proved, 10) << "ops accepted:" << accepted;
  for (const char* must : {" mul", " add", " sub", " div", " exp", " sqrt"})
    EXPECT_NE(accepted.find(must), std::string::npos) << must << " not accepted:" << accepted;
}

}  // namespace
}  // namespace ts::lower

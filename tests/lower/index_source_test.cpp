// Masks in the lowering (issue 22): iota and the values computed from it are position values,
// neither folded constants nor ops of their own; an op reading one computes it inside its tile
// form, each iota as the tile's index plus the tile's origin (dims I, J), and synthesis finds
// affine_select for it on every bundled target, proved for every origin. Regression: a kernel
// with an iota made `score` fail with "unexpected failure: map::at" (the constant folder read the
// missing 'value' attribute of the iota it took for a constant).
#include "tilesweep/lower/index_source.h"

#include <gtest/gtest.h>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/graph_printer.h"
#include "tilesweep/lower/synthesize.h"
#include "tilesweep/lower/tile_op.h"
#include "tilesweep/target/target.h"

namespace ts::lower {
namespace {

ir::Module causal() {
  return ir::parse_module(
      "def f(s: f32[S, S]):\n"
      "    c = sqrt(128.0) + S\n"
      "    return where(iota(S, axis=1) <= iota(S, axis=0), s * c, -inf)\n",
      "t.py", sem::OpTable::builtin());
}

TEST(IndexSource, IotaAndMasksArePositionValues) {
  ir::Module m = causal();
  const ir::Kernel& k = m.kernels.front();
  int iotas = 0;
  for (std::size_t i = 0; i < k.nodes.size(); ++i) {
    const ir::Node& n = k.nodes[i];
    int id = static_cast<int>(i);
    bool index = n.op == "iota";
    EXPECT_EQ(is_index_source(n), index) << n.op;
    EXPECT_EQ(is_position(k, id), index || n.op == "less_equal") << n.op;
    EXPECT_EQ(reads_positions(k, id), n.op == "where") << n.op;
    if (n.op == "const" || n.op == "dim" || n.op == "sqrt" || n.op == "add") {
      EXPECT_TRUE(is_constant(k, id)) << n.op;  // uniform constants still fold
      EXPECT_EQ(classify(n), n.inputs.empty() ? OpClass::Constant : OpClass::Compute);
    }
    if (n.op == "less_equal") {
      EXPECT_FALSE(is_constant(k, id));  // a mask of positions
      EXPECT_FALSE(tile_op(k, id));      // computed inside its reader
    }
    if (!index) continue;
    ++iotas;
    EXPECT_FALSE(is_constant(k, id));
    std::string why;
    EXPECT_FALSE(tile_op(k, id, &why));
    EXPECT_EQ(why, index_source_reason(n));
  }
  EXPECT_EQ(iotas, 2);
}

TEST(IndexSource, AMaskIsComputedInsideItsReadersTileForm) {
  ir::Module m = causal();
  const ir::Kernel& k = m.kernels.front();
  int where = k.outputs.front();
  std::string why;
  auto t = tile_op(k, where, &why);
  ASSERT_TRUE(t) << why;
  // One parameter (s * c); the mask and the -inf fill are inside, over the tile's origins.
  EXPECT_EQ(ir::kernel_signature(t->kernel), "where(x: f32[P, F]) -> f32[P, F]");
  EXPECT_EQ(tile_operands(k, where), std::vector<int>{1});
  for (const char* d : {kRowOrigin, kColOrigin})
    EXPECT_NE(std::find(t->kernel.dims.begin(), t->kernel.dims.end(), d), t->kernel.dims.end());
}

// The causal mask's tile form lowers to one affine_select whose offset is the tile's row origin
// minus its column origin, on each bundled target.
TEST(IndexSource, ACausalMaskIsOneAffineSelect) {
  ir::Module m = causal();
  const ir::Kernel& k = m.kernels.front();
  auto t = tile_op(k, k.outputs.front());
  ASSERT_TRUE(t);
  for (const char* target : {"trn1", "trn2", "trn3"}) {
    SynthesisOptions o;
    o.max_depth = 1;
    SynthesisResult r = synthesize(t->kernel, target::builtin_target(target).isa, o);
    ASSERT_FALSE(r.lowerings.empty()) << target;
    const Lowering& l = r.lowerings.front();
    EXPECT_TRUE(l.proof.proved()) << target;
    const ir::Node& root = l.program.nodes[l.program.outputs[0]];
    ASSERT_EQ(root.op, "affine_select") << target << ": " << l.text;
    EXPECT_EQ(sem::to_string(root.attrs.at("offset")), "I - J") << l.text;
    EXPECT_EQ(root.attrs.at("channel_multiplier"), sem::AttrValue(std::int64_t{1}));
    EXPECT_EQ(root.attrs.at("step"), sem::AttrValue(std::int64_t{-1}));
  }
}

}  // namespace
}  // namespace ts::lower

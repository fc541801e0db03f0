// Index tensors in the lowering (issue 22): iota is not a uniform constant. Regression: a kernel
// with an iota (a causal mask) made `score` fail with "unexpected failure: map::at" (the
// constant folder read the missing 'value' attribute of the iota it took for a constant).
#include "tilesweep/lower/index_source.h"

#include <gtest/gtest.h>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/tile_op.h"

namespace ts::lower {
namespace {

TEST(IndexSource, IotaIsNoConstantAndHasNoTileOp) {
  ir::Module m = ir::parse_module(
      "def f(s: f32[S, S]):\n"
      "    c = sqrt(128.0) + S\n"
      "    return where(iota(S, axis=1) <= iota(S, axis=0), s * c, -inf)\n",
      "t.py", sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  int iotas = 0;
  for (std::size_t i = 0; i < k.nodes.size(); ++i) {
    const ir::Node& n = k.nodes[i];
    int id = static_cast<int>(i);
    bool index = n.op == "iota";
    EXPECT_EQ(is_index_source(n), index) << n.op;
    if (n.op == "const" || n.op == "dim" || n.op == "sqrt" || n.op == "add") {
      EXPECT_TRUE(is_constant(k, id)) << n.op;  // uniform constants still fold
      EXPECT_EQ(classify(n), n.inputs.empty() ? OpClass::Constant : OpClass::Compute);
    }
    if (n.op == "less_equal") {
      EXPECT_FALSE(is_constant(k, id));  // a mask of positions
    }
    if (!index) continue;
    ++iotas;
    EXPECT_FALSE(is_constant(k, id));
    EXPECT_EQ(classify(n), OpClass::Compute);
    std::string why;
    EXPECT_FALSE(tile_op(k, id, &why));
    EXPECT_EQ(why, index_source_reason(n));
    EXPECT_NE(why.find("masks are not lowered yet"), std::string::npos) << why;
  }
  EXPECT_EQ(iotas, 2);
}

}  // namespace
}  // namespace ts::lower

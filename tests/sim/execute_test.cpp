#include "tilesweep/sim/execute.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/interpreter.h"
#include "tilesweep/lower/program_builder.h"
#include "tilesweep/target/target.h"

namespace ts::sim {
namespace {

using lower::Access;
using lower::Program;

// Appends buffers, loops and instructions to a program (instructions from the bundled trn2 ISA).
struct Builder {
  lower::ProgramBuilder builder;
  Program& p = builder.program();

  explicit Builder(const std::string& kernel) : builder(kernel) {}
  int buffer(const std::string& name, sem::Memory m, std::vector<std::int64_t> shape,
             int param = -1, int output = -1) {
    lower::Buffer b;
    b.name = name;
    b.memory = m;
    b.shape = std::move(shape);
    b.param = param;
    b.output = output;
    return builder.add_buffer(std::move(b));
  }
  int loop(int parent, const std::string& var, std::int64_t trips) {
    return builder.loop(parent, var, trips);
  }
  lower::Inst& inst(int block, const std::string& instr, std::vector<int> in, int out,
                    sem::AttrMap attrs = {}, const std::string& note = "") {
    lower::Inst i;
    i.spec = target::builtin_target("trn2").isa.find(instr);
    EXPECT_NE(i.spec, nullptr) << instr;
    i.engine = i.spec->engines.front();
    i.in = std::move(in);
    i.out = out;
    i.attrs = std::move(attrs);
    i.note = note;
    return p.insts[static_cast<std::size_t>(builder.append(block, std::move(i)))];
  }
  // A DMA between HBM buffer `hbm` and `tile`: `terms[d]` gives the start of dim d.
  lower::Inst& dma(int block, bool store, int hbm, int tile, std::vector<std::int64_t> extent,
                   std::vector<std::vector<std::pair<int, std::int64_t>>> terms,
                   std::vector<int> tile_dim, const std::string& instr = "dma_copy") {
    lower::Inst& i = store ? inst(block, instr, {tile}, -1) : inst(block, instr, {}, tile);
    i.dma = true;
    i.store = store;
    i.hbm = Access{hbm, std::move(extent), std::move(terms), std::move(tile_dim)};
    return i;
  }
};

ir::Tensor random_tensor(std::vector<std::int64_t> shape, unsigned seed) {
  ir::Tensor t(std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (auto& v : t.data) v = static_cast<float>(u(rng));
  return t;
}

void expect_close(const ir::Tensor& out, const ir::Tensor& ref) {
  ASSERT_EQ(out.shape, ref.shape);
  int bad = 0;
  for (std::size_t i = 0; i < ref.data.size(); ++i) {
    if (std::abs(out.data[i] - ref.data[i]) <= 1e-4 + 1e-4 * std::abs(ref.data[i])) continue;
    if (++bad <= 5)
      ADD_FAILURE() << "element " << i << ": " << out.data[i] << " vs " << ref.data[i];
  }
  EXPECT_EQ(bad, 0);
}

sem::AttrMap memset_attrs(double value, std::int64_t p, std::int64_t f) {
  return {{"value", value}, {"P", sem::Dim(p)}, {"F", sem::Dim(f)}};
}

TEST(Execute, TiledExpMatchesDirect) {
  Builder b("exp");
  int x = b.buffer("x", sem::Memory::Hbm, {256, 1024}, 0);
  int y = b.buffer("y", sem::Memory::Hbm, {256, 1024}, -1, 0);
  int zero = b.buffer("zero", sem::Memory::Sbuf, {128, 1});
  int xt = b.buffer("xt", sem::Memory::Sbuf, {128, 512});
  int yt = b.buffer("yt", sem::Memory::Sbuf, {128, 512});
  b.p.buffers[zero].constant = true;
  b.inst(0, "memset", {}, zero, memset_attrs(0.0, 128, 1));
  int i = b.loop(0, "i", 2), j = b.loop(i, "j", 2);
  b.dma(j, false, x, xt, {128, 512}, {{{i, 128}}, {{j, 512}}}, {0, 1});
  b.inst(j, "activation", {xt, zero}, yt, {{"func", std::string("exp")}}, "y = exp(x)");
  b.dma(j, true, y, yt, {128, 512}, {{{i, 128}}, {{j, 512}}}, {0, 1});

  ir::Tensor in = random_tensor({256, 1024}, 1);
  auto out = execute(b.p, {in});
  ASSERT_EQ(out.size(), 1u);
  ir::Tensor ref({256, 1024});
  for (std::size_t k = 0; k < in.data.size(); ++k) ref.data[k] = std::exp(in.data[k]);
  expect_close(out[0], ref);
}

TEST(Execute, TiledMatmulAccumulatesInPsum) {
  const std::int64_t M = 256, K = 256, N = 256;
  Builder b("matmul");
  int x = b.buffer("x", sem::Memory::Hbm, {M, K}, 0);
  int w = b.buffer("w", sem::Memory::Hbm, {K, N}, 1);
  int out = b.buffer("out", sem::Memory::Hbm, {M, N}, -1, 0);
  int xt = b.buffer("xt", sem::Memory::Sbuf, {128, 128});
  int xtp = b.buffer("xT_psum", sem::Memory::Psum, {128, 128});
  int xts = b.buffer("xT", sem::Memory::Sbuf, {128, 128});
  int wt = b.buffer("wt", sem::Memory::Sbuf, {128, 128});
  int acc = b.buffer("acc", sem::Memory::Psum, {128, 128});
  int res = b.buffer("res", sem::Memory::Sbuf, {128, 128});
  int m = b.loop(0, "m", M / 128), n = b.loop(m, "n", N / 128), k = b.loop(n, "k", K / 128);
  b.dma(k, false, x, xt, {128, 128}, {{{m, 128}}, {{k, 128}}}, {0, 1});
  b.inst(k, "nc_transpose_pe", {xt}, xtp);
  b.inst(k, "tensor_copy", {xtp}, xts);
  b.dma(k, false, w, wt, {128, 128}, {{{k, 128}}, {{n, 128}}}, {0, 1});
  b.inst(k, "nc_matmul", {xts, wt}, acc, {}, "acc += x^T w").accumulate_block = k;
  b.inst(n, "tensor_copy", {acc}, res);
  b.dma(n, true, out, res, {128, 128}, {{{m, 128}}, {{n, 128}}}, {0, 1});

  ir::Module mod = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/axon/matmul.py",
                                   sem::OpTable::builtin());
  std::vector<ir::Tensor> in = {random_tensor({M, K}, 2), random_tensor({K, N}, 3)};
  auto ref = ir::evaluate(mod.kernels[0], {{"M", M}, {"K", K}, {"N", N}}, in, ir::Precision::F64);
  auto got = execute(b.p, in);
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], ref[0]);
}

TEST(Execute, BroadcastDmaRepeatsAlongPartitions) {
  // out[m, n] = x[m, n] + bias[n]: the bias row is DMA'd into every partition.
  Builder b("bias_add");
  int x = b.buffer("x", sem::Memory::Hbm, {256, 64}, 0);
  int bias = b.buffer("bias", sem::Memory::Hbm, {64}, 1);
  int y = b.buffer("y", sem::Memory::Hbm, {256, 64}, -1, 0);
  int xt = b.buffer("xt", sem::Memory::Sbuf, {128, 64});
  int bt = b.buffer("bt", sem::Memory::Sbuf, {128, 64});
  int yt = b.buffer("yt", sem::Memory::Sbuf, {128, 64});
  b.dma(0, false, bias, bt, {64}, {{}}, {1});
  int i = b.loop(0, "i", 2);
  b.dma(i, false, x, xt, {128, 64}, {{{i, 128}}, {}}, {0, 1});
  b.inst(i, "tensor_tensor", {xt, bt}, yt, {{"op", std::string("add")}});
  b.dma(i, true, y, yt, {128, 64}, {{{i, 128}}, {}}, {0, 1});

  std::vector<ir::Tensor> in = {random_tensor({256, 64}, 4), random_tensor({64}, 5)};
  auto got = execute(b.p, in);
  ir::Tensor ref({256, 64});
  for (std::int64_t r = 0; r < 256; ++r)
    for (std::int64_t c = 0; c < 64; ++c)
      ref.data[r * 64 + c] = in[0].data[r * 64 + c] + in[1].data[c];
  expect_close(got[0], ref);
}

TEST(Execute, TransposingDmaSwapsDims) {
  // y = x.T with x [256, 128]: each [128, 128] block is loaded transposed (dma_transpose) and
  // stored straight.
  Builder b("transpose");
  int x = b.buffer("x", sem::Memory::Hbm, {256, 128}, 0);
  int y = b.buffer("y", sem::Memory::Hbm, {128, 256}, -1, 0);
  int t = b.buffer("t", sem::Memory::Sbuf, {128, 128});
  int i = b.loop(0, "i", 2);
  b.dma(i, false, x, t, {128, 128}, {{{i, 128}}, {}}, {1, 0}, "dma_transpose");
  b.dma(i, true, y, t, {128, 128}, {{}, {{i, 128}}}, {0, 1});

  std::vector<ir::Tensor> in = {random_tensor({256, 128}, 6)};
  auto got = execute(b.p, in);
  ir::Tensor ref({128, 256});
  for (std::int64_t r = 0; r < 256; ++r)
    for (std::int64_t c = 0; c < 128; ++c) ref.data[c * 256 + r] = in[0].data[r * 128 + c];
  expect_close(got[0], ref);
}

TEST(Execute, ReductionAccumulatesAcrossFreeTiles) {
  // Row sums of x [256, 1024]: tensor_reduce per [128, 512] tile, accumulated over the f loop,
  // and row maxima (no accumulation: the last tile's max, checked against that tile).
  Builder b("row_sum");
  int x = b.buffer("x", sem::Memory::Hbm, {256, 1024}, 0);
  int s = b.buffer("s", sem::Memory::Hbm, {256, 1}, -1, 0);
  int mx = b.buffer("mx", sem::Memory::Hbm, {256, 1}, -1, 1);
  int xt = b.buffer("xt", sem::Memory::Sbuf, {128, 512});
  int st = b.buffer("st", sem::Memory::Psum, {128, 1});
  int mt = b.buffer("mt", sem::Memory::Sbuf, {128, 1});
  int i = b.loop(0, "i", 2), j = b.loop(i, "j", 2);
  b.dma(j, false, x, xt, {128, 512}, {{{i, 128}}, {{j, 512}}}, {0, 1});
  b.inst(j, "tensor_reduce", {xt}, st, {{"op", std::string("add")}}).accumulate_block = j;
  b.inst(j, "tensor_reduce", {xt}, mt, {{"op", std::string("max")}});
  b.dma(i, true, s, st, {128, 1}, {{{i, 128}}, {}}, {0, 1});
  b.dma(i, true, mx, mt, {128, 1}, {{{i, 128}}, {}}, {0, 1});

  std::vector<ir::Tensor> in = {random_tensor({256, 1024}, 7)};
  auto got = execute(b.p, in);
  ASSERT_EQ(got.size(), 2u);
  ir::Tensor sum({256, 1}), max({256, 1});
  for (std::int64_t r = 0; r < 256; ++r) {
    max.data[r] = -1e30;
    for (std::int64_t c = 0; c < 1024; ++c) {
      sum.data[r] += in[0].data[r * 1024 + c];
      if (c >= 512) max.data[r] = std::max(max.data[r], in[0].data[r * 1024 + c]);
    }
  }
  expect_close(got[0], sum);
  expect_close(got[1], max);
}

// Strided windows (Window::step): y[r, c] = max(x[r, a + c * s], x[r, b + c * t]) read from one
// contiguously loaded tile, and written strided into a wider tile (every `u`-th column from `o`).
TEST(Execute, StridedWindowsReadAndWriteEveryStepColumn) {
  struct Case {
    lower::Window left, right;
    std::int64_t write_offset, write_step;
  };
  const std::int64_t cols = 64;
  const std::vector<Case> cases = {
      {{{}, 32, 0, 2}, {{}, 32, 1, 2}, 0, 1},   // maxpool's columns: offsets 0 and 1, step 2
      {{{}, 16, 0, 4}, {{}, 16, 3, 4}, 1, 2},   // step 4, written to the odd columns
      {{{}, 19, 5, 3}, {{}, 19, 40, 1}, 0, 3},  // a strided and a contiguous operand
      {{{}, 64, 0, 1}, {{}, 64, 0, 1}, 0, 1},   // step 1: the plain window
  };
  for (const auto& c : cases) {
    const std::int64_t w = c.left.width, wide = (w - 1) * c.write_step + 1 + c.write_offset;
    Builder b("strided");
    int x = b.buffer("x", sem::Memory::Hbm, {128, cols}, 0);
    int y = b.buffer("y", sem::Memory::Hbm, {128, wide}, -1, 0);
    int xt = b.buffer("xt", sem::Memory::Sbuf, {128, cols});
    int yt = b.buffer("yt", sem::Memory::Sbuf, {128, wide});
    b.dma(0, false, x, xt, {128, cols}, {{}, {}}, {0, 1});
    b.inst(0, "memset", {}, yt, memset_attrs(0.0, 128, wide));
    auto& mx = b.inst(0, "tensor_tensor", {xt, xt}, yt, {{"op", std::string("maximum")}});
    mx.in_window = {c.left, c.right};
    mx.out_window = lower::Window{{}, w, c.write_offset, c.write_step};
    b.dma(0, true, y, yt, {128, wide}, {{}, {}}, {0, 1});
    ir::Tensor in = random_tensor({128, cols}, 11);
    auto got = execute(b.p, {in});
    ir::Tensor ref({128, wide});
    for (std::int64_t r = 0; r < 128; ++r)
      for (std::int64_t k = 0; k < w; ++k)
        ref.data[r * wide + c.write_offset + k * c.write_step] =
            std::max(in.data[r * cols + c.left.offset + k * c.left.step],
                     in.data[r * cols + c.right.offset + k * c.right.step]);
    SCOPED_TRACE(fmt::format("step {} / {}", c.left.step, c.right.step));
    expect_close(got[0], ref);
  }
}

// A strided window reaching past its buffer's columns is an internal error naming it.
TEST(Execute, StridedWindowPastTheBufferIsAnError) {
  Builder b("strided");
  int x = b.buffer("x", sem::Memory::Hbm, {128, 64}, 0);
  int y = b.buffer("y", sem::Memory::Hbm, {128, 32}, -1, 0);
  int xt = b.buffer("xt", sem::Memory::Sbuf, {128, 64});
  int yt = b.buffer("yt", sem::Memory::Sbuf, {128, 32});
  b.dma(0, false, x, xt, {128, 64}, {{}, {}}, {0, 1});
  b.inst(0, "tensor_copy", {xt}, yt).in_window = {lower::Window{{}, 32, 2, 2}};
  b.dma(0, true, y, yt, {128, 32}, {{}, {}}, {0, 1});
  try {
    execute(b.p, {random_tensor({128, 64}, 8)});
    FAIL() << "expected an InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("window [2, 65) step 2 outside 64 columns of xt"),
              std::string::npos)
        << e.what();
  }
}

TEST(Execute, ShapeMismatchNamesTheInstruction) {
  Builder b("bad");
  int x = b.buffer("x", sem::Memory::Hbm, {128, 64}, 0);
  int y = b.buffer("y", sem::Memory::Hbm, {128, 64}, -1, 0);
  int xt = b.buffer("xt", sem::Memory::Sbuf, {128, 64});
  int yt = b.buffer("yt", sem::Memory::Sbuf, {128, 32});
  b.dma(0, false, x, xt, {128, 64}, {{}, {}}, {0, 1});
  b.inst(0, "reciprocal", {xt}, yt, {}, "y = 1 / x");
  b.dma(0, true, y, yt, {128, 64}, {{}, {}}, {0, 1});
  try {
    execute(b.p, {random_tensor({128, 64}, 8)});
    FAIL() << "expected an InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "instruction 1 (reciprocal: y = 1 / x) computes a [128, 64] tile, but its "
                  "output yt is [128, 32]"),
              std::string::npos)
        << e.what();
  }
  // Operands that do not fit the instruction at all.
  b.p.insts[1].spec = target::builtin_target("trn2").isa.find("tensor_tensor");
  b.p.insts[1].in = {xt, yt};
  b.p.insts[1].attrs = {{"op", std::string("add")}};
  try {
    execute(b.p, {random_tensor({128, 64}, 8)});
    FAIL() << "expected an InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "instruction 1 (tensor_tensor: y = 1 / x): its operands do not fit"),
              std::string::npos)
        << e.what();
  }
}

TEST(Execute, WrongInputShapeIsAUserError) {
  Builder b("copy");
  int x = b.buffer("x", sem::Memory::Hbm, {128, 64}, 0);
  int y = b.buffer("y", sem::Memory::Hbm, {128, 64}, -1, 0);
  int t = b.buffer("t", sem::Memory::Sbuf, {128, 64});
  b.dma(0, false, x, t, {128, 64}, {{}, {}}, {0, 1});
  b.dma(0, true, y, t, {128, 64}, {{}, {}}, {0, 1});
  EXPECT_THROW(execute(b.p, {random_tensor({64, 128}, 9)}), UserError);
  EXPECT_THROW(execute(b.p, {}), UserError);
  expect_close(execute(b.p, {random_tensor({128, 64}, 9)})[0], random_tensor({128, 64}, 9));
}

}  // namespace
}  // namespace ts::sim

// The NKI importer: kernels of both dialects imported and run on numbers by the functional
// interpreter against a reference of the same computation; the bytes they move; the errors for
// unsupported constructs and shape errors, with file:line:col.
#include "tilesweep/nki_import/importer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>
#include <tuple>

#include "tilesweep/sim/execute.h"
#include "tilesweep/sim/simulate.h"

namespace ts::nki {
namespace {

std::string kernel_path(const std::string& name) {
  return std::string(TS_SOURCE_DIR) + "/tests/nki_import/kernels/" + name;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ir::Tensor random_tensor(std::vector<std::int64_t> shape, unsigned seed) {
  ir::Tensor t(std::move(shape));
  unsigned x = seed * 2654435761u + 1;
  for (double& v : t.data) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<double>(x >> 8) / static_cast<double>(1u << 24) - 0.5;
  }
  return t;
}

ir::Tensor matmul_ref(const std::vector<ir::Tensor>& in) {  // lhsT [K, M], rhs [K, N]
  std::int64_t K = in[0].shape[0], M = in[0].shape[1], N = in[1].shape[1];
  ir::Tensor out({M, N});
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (std::int64_t k = 0; k < K; ++k) s += in[0].data[k * M + m] * in[1].data[k * N + n];
      out.data[m * N + n] = s;
    }
  return out;
}

ir::Tensor add_ref(const std::vector<ir::Tensor>& in) {
  ir::Tensor out(in[0].shape);
  for (std::size_t i = 0; i < out.data.size(); ++i) out.data[i] = in[0].data[i] + in[1].data[i];
  return out;
}

ir::Tensor softmax_ref(const std::vector<ir::Tensor>& in) {
  std::int64_t R = in[0].shape[0], C = in[0].shape[1];
  ir::Tensor out(in[0].shape);
  for (std::int64_t r = 0; r < R; ++r) {
    double mx = -1e30, sum = 0;
    for (std::int64_t c = 0; c < C; ++c) mx = std::max(mx, in[0].data[r * C + c]);
    for (std::int64_t c = 0; c < C; ++c) sum += std::exp(in[0].data[r * C + c] - mx);
    for (std::int64_t c = 0; c < C; ++c)
      out.data[r * C + c] = std::exp(in[0].data[r * C + c] - mx) / sum;
  }
  return out;
}

ir::Tensor rowmax_ref(const std::vector<ir::Tensor>& in) {
  std::int64_t R = in[0].shape[0], C = in[0].shape[1];
  ir::Tensor out({R, 1});
  for (std::int64_t r = 0; r < R; ++r) {
    double mx = -3.0e38;
    for (std::int64_t c = 0; c < C; ++c) mx = std::max(mx, in[0].data[r * C + c]);
    out.data[r] = mx;
  }
  return out;
}

// delta / u [C, S], a [C, N], b / c [N, S]: y[c, s] = sum_n c[n, s] h_n[c, s], with
// h_n[c, s] = exp(delta[c, s] a[c, n]) h_n[c, s - 1] + delta[c, s] u[c, s] b[n, s].
ir::Tensor mamba_ref(const std::vector<ir::Tensor>& in) {
  std::int64_t C = in[0].shape[0], S = in[0].shape[1], N = in[2].shape[1];
  ir::Tensor out({C, S});
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t n = 0; n < N; ++n) {
      double h = 0;
      for (std::int64_t s = 0; s < S; ++s) {
        double d = in[0].data[c * S + s];
        h = std::exp(d * in[2].data[c * N + n]) * h +
            d * in[1].data[c * S + s] * in[3].data[n * S + s];
        out.data[c * S + s] += in[4].data[n * S + s] * h;
      }
    }
  return out;
}

std::function<ir::Tensor(const std::vector<ir::Tensor>&)> affine_ref(double scale, double shift) {
  return [scale, shift](const std::vector<ir::Tensor>& in) {
    ir::Tensor out(in[0].shape);
    for (std::size_t i = 0; i < out.data.size(); ++i) out.data[i] = in[0].data[i] * scale + shift;
    return out;
  };
}

ir::Tensor gated_exp_ref(const std::vector<ir::Tensor>& in) {  // x tanh(sigmoid(p) p), p = exp(x) x
  ir::Tensor out(in[0].shape);
  for (std::size_t i = 0; i < out.data.size(); ++i) {
    double x = in[0].data[i], p = std::exp(x) * x;
    out.data[i] = x * std::tanh(p / (1 + std::exp(-p)));
  }
  return out;
}

struct FunctionalCase {
  std::string file;
  std::vector<std::string> args;
  std::function<ir::Tensor(const std::vector<ir::Tensor>&)> reference;
  double hbm_read_bytes;        // what the kernel's loads move, counted by hand
  double spill_save_bytes = 0;  // written to spill scratch tensors, besides the output
  std::string kernel = "";      // the @nki.jit function, when the file has several
};

class Functional : public ::testing::TestWithParam<FunctionalCase> {};

TEST_P(Functional, MatchesReferenceAndMovesTheBytesItLoads) {
  const FunctionalCase& c = GetParam();
  std::vector<KernelArg> args;
  for (const auto& a : c.args) args.push_back(parse_kernel_arg(a));
  const target::Target& t = target::builtin_target("trn1");
  ImportedKernel k = import_kernel(read(kernel_path(c.file)), c.file, c.kernel, args, t);
  std::vector<ir::Tensor> inputs;
  for (std::size_t i = 0; i < args.size(); ++i)
    inputs.push_back(random_tensor(args[i].shape, static_cast<unsigned>(i + 1)));
  std::vector<ir::Tensor> out = sim::execute(k.program, inputs);
  ASSERT_EQ(out.size(), 1u);
  ir::Tensor want = c.reference(inputs);
  ASSERT_EQ(out[0].shape, want.shape);
  for (std::size_t i = 0; i < want.data.size(); ++i)
    ASSERT_NEAR(out[0].data[i], want.data[i], 1e-4 * (1 + std::fabs(want.data[i])))
        << c.file << " element " << i;
  sim::SimResult r = sim::simulate(k.program, t);
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_EQ(r.hbm_read_bytes, c.hbm_read_bytes);
  EXPECT_EQ(r.hbm_write_bytes, static_cast<double>(want.data.size() * 4) + c.spill_save_bytes);
  EXPECT_GT(r.latency_ns, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, Functional,
    ::testing::Values(
        // 1 x 1 x 2 (m, n, k) tiles of [128,128] + [128,512] fp32
        FunctionalCase{"matmul_tiled.py",
                       {"lhsT=f32[256,128]", "rhs=f32[256,512]"},
                       matmul_ref,
                       2 * (65536 + 262144)},
        // lhsT once (128 KiB), rhs once per row block (1 x 512 KiB)
        FunctionalCase{"matmul_hoisted.py",
                       {"lhsT=f32[256,128]", "rhs=f32[256,512]"},
                       matmul_ref,
                       131072 + 524288},
        FunctionalCase{
            "add_new_api.py", {"a=f32[256,64]", "b=f32[256,64]"}, add_ref, 2 * 256 * 64 * 4},
        // 300 rows: the mask clips the last 128-row tile to 44 rows
        FunctionalCase{"softmax_masked.py", {"x=f32[300,40]"}, softmax_ref, 300 * 40 * 4},
        // 180 KiB per partition on chip: rematerialized (x read once, by the reloads) / spilled
        // (x read once, the scratch tensor written and read once: spill_bytes below)
        FunctionalCase{"spill_remat.py", {"x=f32[5760,1024]"}, affine_ref(3, 0), 5760.0 * 1024 * 4},
        // nl.full's positional fill value; a reduction of one tile of an on-chip array
        FunctionalCase{"rowmax_full.py", {"x=f32[256,64]"}, rowmax_ref, 256 * 64 * 4},
        // a per-partition activation scale, broadcasts on the Tensor engine, tensor_tensor_scan
        FunctionalCase{
            "mamba_small.py",
            {"delta=f32[256,64]", "u=f32[256,64]", "a=f32[256,3]", "b=f32[3,64]", "c=f32[3,64]"},
            mamba_ref,
            2 * 256 * 64 * 4 + 3 * 256 * 4 + 2 * 2 * 3 * 64 * 4},
        // an affine_range loop's two iterations interleaved statement by statement
        FunctionalCase{"interleave_halves.py",
                       {"x=f32[256,1024]"},
                       gated_exp_ref,
                       256 * 1024 * 4,
                       0,
                       "halves_parallel"},
        FunctionalCase{"spill_scratch.py",
                       {"x=f32[5760,1024]"},
                       affine_ref(2, 1),
                       2 * 5760.0 * 1024 * 4,
                       5760.0 * 1024 * 4}),
    [](const auto& info) { return info.param.file.substr(0, info.param.file.find('.')); });

// What spilling moves: the scratch tensor's bytes saved and reloaded (none for a rematerialized
// array), the written bytes with the saves, and SBUF back under the usable capacity.
TEST(Spill, CountsSavedAndReloadedBytesAndFits) {
  const target::Target& t = target::builtin_target("trn1");
  const double x_bytes = 5760.0 * 1024 * 4;
  for (const auto& [file, spilled, written] : std::vector<std::tuple<std::string, double, double>>{
           {"spill_remat.py", 0, x_bytes},
           {"spill_scratch.py", 2 * x_bytes, 2 * x_bytes},
           // the read right after the write takes the staging tile: one reload, not two
           {"spill_forward.py", 2 * x_bytes, 3 * x_bytes}}) {
    ImportedKernel k =
        import_kernel(read(kernel_path(file)), file, "", {parse_kernel_arg("x=f32[5760,1024]")}, t);
    sim::SimResult r = sim::simulate(k.program, t);
    ASSERT_TRUE(r.feasible) << file << ": " << r.reason;
    EXPECT_EQ(r.spill_bytes, spilled) << file;
    EXPECT_EQ(r.hbm_write_bytes, written) << file;
    EXPECT_LE(r.sbuf_peak_bytes, t.sbuf.usable_bytes_per_partition) << file;
  }
}

// Spilling is decided with every tile single-buffered; the tiles that still fit get their two
// rotating buffers back afterwards.
TEST(Spill, KeepsTheOtherTilesMultiBuffered) {
  const target::Target& t = target::builtin_target("trn1");
  ImportedKernel k = import_kernel(read(kernel_path("spill_scratch.py")), "spill_scratch.py", "",
                                   {parse_kernel_arg("x=f32[5760,1024]")}, t);
  EXPECT_TRUE(std::any_of(k.program.buffers.begin(), k.program.buffers.end(), [](const auto& b) {
    return b.memory == sem::Memory::Sbuf && !b.constant && b.bufs == 2;
  }));
}

// A short innermost affine_range loop of straight-line code has its iterations interleaved: the
// program holds the halves' instructions alternately (each statement for h = 0, then h = 1), so
// Vector computes one half while Scalar computes the other; a sequential_range loop keeps its
// order. (The NKIBench AdamW baseline: 3.33 -> 2.96 ms simulated, 2.0 measured.)
TEST(Timing, InterleavesTheIterationsOfAShortParallelLoop) {
  const target::Target& t = target::builtin_target("trn1");
  std::vector<KernelArg> args = {parse_kernel_arg("x=f32[8192,1024]")};
  auto import = [&](const char* kernel) {
    return import_kernel(read(kernel_path("interleave_halves.py")), "interleave_halves.py", kernel,
                         args, t);
  };
  ImportedKernel par = import("halves_parallel"), seq = import("halves_sequential");
  auto body_lines = [](const lower::Program& p) {
    std::vector<std::string> lines;
    for (const lower::Inst& i : p.insts)
      if (i.spec->op.name != "dma_copy" && i.note != "constant") lines.push_back(i.note);
    return lines;
  };
  std::vector<std::string> lines = body_lines(par.program);
  ASSERT_EQ(lines.size(), 12u);
  for (std::size_t i = 0; i < lines.size(); i += 2) EXPECT_EQ(lines[i], lines[i + 1]);
  std::vector<std::string> seq_lines = body_lines(seq.program);
  ASSERT_EQ(seq_lines.size(), 6u);
  EXPECT_LT(sim::simulate(par.program, t).latency_ns,
            0.9 * sim::simulate(seq.program, t).latency_ns);
}

// A tile written in two column windows is one version of it: with two rotating buffers the next
// tile is computed while this one is stored, as when one instruction writes it whole (each window
// once took a buffer of its own: 255.8 us against 145.2).
TEST(Timing, WindowWritesOfATileAreOneVersion) {
  const target::Target& t = target::builtin_target("trn1");
  std::vector<KernelArg> args = {parse_kernel_arg("x=f32[128,1024]"), parse_kernel_arg("reps=64")};
  auto latency = [&](const char* kernel) {
    ImportedKernel k =
        import_kernel(read(kernel_path("store_halves.py")), "store_halves.py", kernel, args, t);
    return sim::simulate(k.program, t).latency_ns;
  };
  EXPECT_LT(latency("store_halves"), 1.1 * latency("store_whole"));
}

struct ErrorCase {
  std::string name, source;
  std::vector<std::string> args;
  std::string expect;  // a substring of the message, with the location
};

class Errors : public ::testing::TestWithParam<ErrorCase> {};

const char* kHead =
    "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as "
    "nisa\n";

TEST_P(Errors, NameTheConstructAndItsLocation) {
  const ErrorCase& c = GetParam();
  std::vector<KernelArg> args;
  for (const auto& a : c.args) args.push_back(parse_kernel_arg(a));
  try {
    import_kernel(kHead + c.source, "k.py", "", args, target::builtin_target("trn1"));
    FAIL() << "no error for " << c.name;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Errors,
    ::testing::Values(
        ErrorCase{"while_loop",
                  "@nki.jit\ndef k(a):\n    while True:\n        pass\n",
                  {"a=f32[128,4]"},
                  "k.py:6:5: error: 'while' is not supported"},
        ErrorCase{"unknown_nl",
                  "@nki.jit\ndef k(a):\n    t = nl.load(a)\n    u = nl.cumsum(t)\n",
                  {"a=f32[128,4]"},
                  "k.py:7:9: error: nl.cumsum is not supported"},
        ErrorCase{"matmul_shape",
                  "@nki.jit\ndef k(a, b):\n    x = nl.load(a)\n    y = nl.load(b)\n    z = "
                  "nisa.nc_matmul(x, y)\n",
                  {"a=f32[128,64]", "b=f32[64,512]"},
                  "k.py:8:9: error: shape error in nc_matmul"},
        ErrorCase{"out_of_bounds",
                  "@nki.jit\ndef k(a):\n    for i in nl.affine_range(3):\n        t = nl.load(a[i "
                  "* 128:(i + 1) * 128, :])\n",
                  {"a=f32[256,4]"},
                  "k.py:7:13: error: shape error: the index of 'a' dim 0 reaches [0, 383]"},
        ErrorCase{
            "partitions",
            "@nki.jit\ndef k(a):\n    t = nl.ndarray((256, 4), dtype=nl.float32, buffer=nl.sbuf)\n",
            {"a=f32[256,4]"},
            "k.py:6:9: error: shape error: 'ndarray' has 256 partitions"},
        ErrorCase{"nonaffine",
                  "@nki.jit\ndef k(a):\n    for i in nl.affine_range(2):\n        t = nl.load(a[i "
                  "* i, :])\n",
                  {"a=f32[4,4]"},
                  "k.py:7:25: error: '*' of a loop variable is not affine"},
        ErrorCase{
            "gpsimd_psum_engine",
            "@nki.jit\ndef k(a):\n    t = nl.load(a)\n    u = nisa.nc_matmul(t, t, engine=1)\n",
            {"a=f32[128,4]"},
            "k.py:7:37: error: nc_matmul() has no argument 'engine'"},
        ErrorCase{"matmul_from_psum",
                  "@nki.jit\ndef k(a):\n    t = nl.load(a)\n    p = nisa.nc_matmul(t, t)\n    q = "
                  "nisa.nc_matmul(p, t)\n",
                  {"a=f32[128,128]"},
                  "k.py:8:9: error: nc_matmul's operand 'stationary' cannot be in psum on trn1"},
        ErrorCase{"missing_arg",
                  "@nki.jit\ndef k(a, b):\n    pass\n",
                  {"a=f32[4,4]"},
                  "k.py:5:10: error: kernel parameter 'b' has no value"},
        ErrorCase{"assert_fails",
                  "@nki.jit\ndef k(a):\n    assert a.shape[0] == 128\n",
                  {"a=f32[4,4]"},
                  "k.py:6:5: error: shape error: this assertion"},
        ErrorCase{"two_loop_accumulation",
                  "@nki.jit\ndef k(a):\n    acc = nl.zeros((128, 128), dtype=nl.float32, "
                  "buffer=nl.psum)\n"
                  "    for i in nl.affine_range(2):\n        for j in nl.affine_range(2):\n"
                  "            t = nl.load(a[i * 256 + j * 128:i * 256 + j * 128 + 128, :])\n"
                  "            acc += nisa.nc_matmul(t, t)\n",
                  {"a=f32[512,128]"},
                  "k.py:10:20: error: += into 'zeros' accumulates across 2 nested loops"},
        ErrorCase{"full_without_value",
                  "@nki.jit\ndef k(a):\n    t = nl.full((128, 4), dtype=nl.float32)\n",
                  {"a=f32[128,4]"},
                  "k.py:6:9: error: nl.full's fill_value must be a number"},
        ErrorCase{"scan_operators",
                  "@nki.jit\ndef k(a):\n    t = nl.load(a)\n    s = nisa.tensor_tensor_scan(t, t, "
                  "initial=0, op0=nl.add, op1=nl.add)\n",
                  {"a=f32[128,4]"},
                  "k.py:7:9: error: tensor_tensor_scan is supported as op0=multiply, op1=add with "
                  "initial=0 or a [P, 1] tile only"},
        ErrorCase{"broadcast_many_partitions",
                  "@nki.jit\ndef k(a):\n    t = nl.load(a)\n    s = t.broadcast_to((128, 4))\n",
                  {"a=f32[128,4]"},
                  "k.py:7:9: error: broadcast_to takes a [1, F] tile"},
        ErrorCase{"unclosed_string",
                  "@nki.jit\ndef k(a):\n    s = 'abc\n",
                  {"a=f32[4,4]"},
                  "k.py:6:9: error: this string is never closed"}),
    [](const auto& info) { return info.param.name; });

TEST(KernelArgs, ParseTensorsAndScalars) {
  KernelArg a = parse_kernel_arg("lhs=bf16[4096, 8192]");
  EXPECT_EQ(a.name, "lhs");
  EXPECT_FALSE(a.scalar);
  EXPECT_EQ(a.dtype, ir::DType::BF16);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{4096, 8192}));
  KernelArg s = parse_kernel_arg("eps=1e-5");
  EXPECT_TRUE(s.scalar);
  EXPECT_FALSE(s.integer);
  EXPECT_DOUBLE_EQ(s.value, 1e-5);
  EXPECT_TRUE(parse_kernel_arg("n=3").integer);
  for (const char* bad : {"x", "=f32[1]", "x=f99[1]", "x=f32[0]", "x=f32[2,]", "x=f32[2", "x=abc"})
    EXPECT_THROW(parse_kernel_arg(bad), UserError) << bad;
}

TEST(JitKernels, ListsTheDecoratedFunctions) {
  std::string src = std::string(kHead) +
                    "def helper(x):\n    return x\n@nki.jit\ndef a(x):\n    pass\n@nki.jit()\ndef "
                    "b(x):\n    pass\n";
  EXPECT_EQ(jit_kernels(src, "k.py"), (std::vector<std::string>{"a", "b"}));
  EXPECT_THROW(import_kernel(src, "k.py", "", {}, target::builtin_target("trn1")), UserError);
}

}  // namespace
}  // namespace ts::nki

#include "tilesweep/lower/nki.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include <unistd.h>

#include "tilesweep/base/source.h"
#include "tilesweep/lower/program_builder.h"
#include "tilesweep/target/target.h"

namespace ts::lower {
namespace {

namespace fs = std::filesystem;

// Appends buffers, loops and instructions to a program (instructions from the bundled trn2 ISA).
struct Builder {
  ProgramBuilder builder;
  Program& p = builder.program();

  explicit Builder(const std::string& kernel) : builder(kernel) {}
  int buffer(const std::string& name, sem::Memory m, std::vector<std::int64_t> shape, int param = -1, int output = -1) {
    Buffer b;
    b.name = name;
    b.memory = m;
    b.shape = std::move(shape);
    b.param = param;
    b.output = output;
    return builder.add_buffer(std::move(b));
  }
  int loop(int parent, const std::string& var, std::int64_t trips) { return builder.loop(parent, var, trips); }
  Inst& inst(int block, const std::string& instr, std::vector<int> in, int out, sem::AttrMap attrs = {},
             const std::string& note = "") {
    Inst i;
    i.spec = sim::builtin_target("trn2").isa.find(instr);
    EXPECT_NE(i.spec, nullptr) << instr;
    i.engine = i.spec->engines.front();
    i.in = std::move(in);
    i.out = out;
    i.attrs = std::move(attrs);
    i.note = note;
    return p.insts[static_cast<std::size_t>(builder.append(block, std::move(i)))];
  }
  Inst& dma(int block, bool store, int hbm, int tile, std::vector<std::int64_t> extent,
            std::vector<std::vector<std::pair<int, std::int64_t>>> terms, std::vector<int> tile_dim,
            const std::string& instr = "dma_copy") {
    Inst& i = store ? inst(block, instr, {tile}, -1) : inst(block, instr, {}, tile);
    i.dma = true;
    i.store = store;
    i.hbm = Access{hbm, std::move(extent), std::move(terms), std::move(tile_dim)};
    return i;
  }
};

Program tiled_exp() {
  Builder b("exp");
  int x = b.buffer("x", sem::Memory::Hbm, {256, 1024}, 0);
  int y = b.buffer("y", sem::Memory::Hbm, {256, 1024}, -1, 0);
  int zero = b.buffer("zero", sem::Memory::Sbuf, {128, 1});
  int xt = b.buffer("xt", sem::Memory::Sbuf, {128, 512});
  int yt = b.buffer("yt", sem::Memory::Sbuf, {128, 512});
  b.p.buffers[xt].bufs = 2;
  b.inst(0, "memset", {}, zero, {{"value", 0.0}, {"P", sem::Dim(128)}, {"F", sem::Dim(1)}}, "zero bias");
  int i = b.loop(0, "i", 2), j = b.loop(i, "j", 2);
  b.dma(j, false, x, xt, {128, 512}, {{{i, 128}}, {{j, 512}}}, {0, 1});
  b.inst(j, "activation", {xt, zero}, yt, {{"func", std::string("exp")}}, "y = exp(x)");
  b.dma(j, true, y, yt, {128, 512}, {{{i, 128}}, {{j, 512}}}, {0, 1});
  return b.p;
}

const char* kTiledExp = R"py(import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def exp(x):
    y = nl.ndarray((256, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    zero = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    zero[...] = nisa.memset(shape=(128, 1), value=0.0, dtype=nl.float32, engine=nisa.vector_engine)  # zero bias
    for i in nl.affine_range(2):
        for j in nl.affine_range(2):
            xt = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)  # 2 buffers
            yt = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=xt, src=x[i * 128 : i * 128 + 128, j * 512 : j * 512 + 512])
            yt[...] = nisa.activation(op=nl.exp, data=xt, bias=zero, scale=1.0)  # y = exp(x)
            nisa.dma_copy(dst=y[i * 128 : i * 128 + 128, j * 512 : j * 512 + 512], src=yt)
    return y
)py";

Program tiled_matmul() {
  Builder b("matmul");
  int x = b.buffer("x", sem::Memory::Hbm, {256, 384}, 0);
  int w = b.buffer("w", sem::Memory::Hbm, {384, 512}, 1);
  int out = b.buffer("out", sem::Memory::Hbm, {256, 512}, -1, 0);
  int xt = b.buffer("xt", sem::Memory::Sbuf, {128, 128});
  int xtp = b.buffer("xT psum", sem::Memory::Psum, {128, 128});
  int xts = b.buffer("xT", sem::Memory::Sbuf, {128, 128});
  int wt = b.buffer("wt", sem::Memory::Sbuf, {128, 512});
  int acc = b.buffer("acc", sem::Memory::Psum, {128, 512});
  int res = b.buffer("res", sem::Memory::Sbuf, {128, 512});
  int m = b.loop(0, "m", 2), n = b.loop(m, "n", 1), k = b.loop(n, "k", 3);
  b.dma(k, false, x, xt, {128, 128}, {{{m, 128}}, {{k, 128}}}, {0, 1});
  b.inst(k, "nc_transpose_pe", {xt}, xtp, {}, "x^T");
  b.inst(k, "tensor_copy", {xtp}, xts);
  b.dma(k, false, w, wt, {128, 512}, {{{k, 128}}, {{n, 512}}}, {0, 1});
  b.inst(k, "nc_matmul", {xts, wt}, acc, {}, "acc += x^T w").accumulate_block = k;
  b.inst(n, "tensor_copy", {acc}, res).engine = sem::Engine::Scalar;
  b.dma(n, true, out, res, {128, 512}, {{{m, 128}}, {{n, 512}}}, {0, 1});
  b.p.config = "tiles 128x512, K loop sequential";
  return b.p;
}

const char* kTiledMatmul = R"py(import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def matmul(x, w):
    # tiles 128x512, K loop sequential
    out = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(2):
        for n in nl.affine_range(1):
            acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            acc[...] = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
            for k in nl.sequential_range(3):
                xt = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                xT_psum = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
                xT = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                wt = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=xt, src=x[m * 128 : m * 128 + 128, k * 128 : k * 128 + 128])
                xT_psum[...] = nisa.nc_transpose(xt, engine=nisa.tensor_engine)  # x^T
                xT[...] = nisa.tensor_copy(xT_psum, engine=nisa.vector_engine)
                nisa.dma_copy(dst=wt, src=w[k * 128 : k * 128 + 128, n * 512 : n * 512 + 512])
                acc[...] += nisa.nc_matmul(xT, wt)  # acc += x^T w
            res[...] = nisa.tensor_copy(acc, engine=nisa.scalar_engine)
            nisa.dma_copy(dst=out[m * 128 : m * 128 + 128, n * 512 : n * 512 + 512], src=res)
    return out
)py";

// DMA views: broadcasts, transposes (by the access, by the instruction, by both), dropped dims,
// and a reduction accumulated across a loop.
Program dma_views() {
  Builder b("dma views");
  int x = b.buffer("x", sem::Memory::Hbm, {4, 256, 128}, 0);
  int bias = b.buffer("bias", sem::Memory::Hbm, {128}, 1);
  int y = b.buffer("y", sem::Memory::Hbm, {128, 1024}, -1, 0);
  int s = b.buffer("s", sem::Memory::Hbm, {256, 1}, -1, 1);
  int t = b.buffer("t", sem::Memory::Sbuf, {128, 128});
  int u = b.buffer("u", sem::Memory::Sbuf, {128, 128});
  int bt = b.buffer("bt", sem::Memory::Sbuf, {128, 128});
  int r = b.buffer("r", sem::Memory::Psum, {128, 1});
  b.dma(0, false, bias, bt, {128}, {{}}, {1});
  int i = b.loop(0, "b", 4), j = b.loop(i, "i", 2);
  b.dma(j, false, x, t, {1, 128, 128}, {{{i, 1}}, {{j, 128}}, {}}, {-1, 1, 0}, "dma_transpose");
  b.dma(j, false, x, u, {1, 128, 128}, {{{i, 1}}, {{j, 128}}, {}}, {-1, 1, 0});
  b.inst(j, "tensor_reduce", {u}, r, {{"op", std::string("max")}}, "r = max(x)").accumulate_block = i;
  b.dma(j, true, y, t, {128, 128}, {{}, {{i, 256}, {j, 128}}}, {0, 1});
  b.dma(0, true, s, r, {128, 1}, {{}, {}}, {0, 1});
  return b.p;
}

const char* kDmaViews = R"py(import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def dma_views(x, bias):
    y = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    s = nl.ndarray((256, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    bt = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    r = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.psum)
    nisa.dma_copy(dst=bt, src=bias[:].reshape((1, 128)).broadcast_to((128, 128)))
    r[...] = nl.zeros((128, 1), dtype=nl.float32, buffer=nl.psum)
    for b in nl.sequential_range(4):
        for i in nl.affine_range(2):
            t = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            u = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            t[...] = nisa.dma_transpose(x[b, i * 128 : i * 128 + 128, :])
            nisa.dma_copy(dst=u, src=x[b, i * 128 : i * 128 + 128, :].T)
            r[...] += nisa.tensor_reduce(nl.max, u, axis=(1,), keepdims=True)  # r = max(x)
            nisa.dma_copy(dst=y[:, b * 256 + i * 128 : b * 256 + i * 128 + 128], src=t)
    nisa.dma_copy(dst=s[0 : 128, :], src=r)
    return y, s
)py";

// One emitted kernel per case: its golden text inline, or (expected == nullptr) in
// tests/lower/golden/NAME.py, rewritten when TS_UPDATE_GOLDEN is set. Materialized kernels join
// with one line each, e.g. {"rmsnorm_matmul", [] { return <materialize(...)>; }, {"x", "w", "eps"}, nullptr}.
struct Case {
  const char* name;
  std::function<Program()> build;
  std::vector<std::string> params;
  const char* expected;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"tiled_exp", tiled_exp, {"x"}, kTiledExp},
      {"tiled_matmul", tiled_matmul, {"x", "w"}, kTiledMatmul},
      {"dma_views", dma_views, {"x", "bias"}, kDmaViews},
  };
  return c;
}

TEST(Nki, EmitsGoldenSources) {
  for (const Case& c : cases()) {
    std::string got = emit_nki(c.build(), c.params);
    if (c.expected) {
      EXPECT_EQ(got, c.expected) << c.name;
      continue;
    }
    fs::path golden = fs::path(TS_SOURCE_DIR) / "tests" / "lower" / "golden" / (std::string(c.name) + ".py");
    if (std::getenv("TS_UPDATE_GOLDEN")) std::ofstream(golden) << got;
    EXPECT_EQ(got, read_text_file(golden.string())) << c.name << " (TS_UPDATE_GOLDEN=1 rewrites " << golden << ")";
  }
}

// Every emitted kernel is valid Python (the NKI compiler itself is not available here).
TEST(Nki, EmittedSourcesCompileAsPython) {
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  fs::path dir = fs::temp_directory_path() / ("tilesweep_nki_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const Case& c : cases()) {
    fs::path file = dir / (std::string(c.name) + ".py");
    std::ofstream(file) << emit_nki(c.build(), c.params);
    std::string cmd = "/usr/bin/python3 -m py_compile '" + file.string() + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  fs::remove_all(dir);
}

TEST(Nki, EveryBundledInstructionHasATemplate) {
  for (const auto& target : sim::builtin_target_names()) {
    const auto& isa = sim::builtin_target(target).isa;
    for (const auto& name : isa.names()) EXPECT_FALSE(isa.find(name)->nki.empty()) << target << ": " << name;
  }
}

TEST(Nki, ExpandsTemplates) {
  auto expand = [](const std::string& t) {
    std::string error;
    std::string out = sem::expand_nki(t, [](const std::string& k) { return "<" + k + ">"; }, &error);
    return error.empty() ? out : "error: " + error;
  };
  EXPECT_EQ(expand("nisa.f({x}, op={op0})"), "nisa.f(<x>, op=<op0>)");
  EXPECT_EQ(expand("{{literal}} {x}"), "{literal} <x>");
  EXPECT_EQ(expand("f({x.y})"), "error: '{x.y}' at column 3 is not a placeholder (a name in braces)");
  EXPECT_EQ(expand("f({x"), "error: '{' at column 3 is not closed");
  EXPECT_EQ(expand("f(x})"), "error: '}' at column 4 closes nothing (write '}}' for a literal brace)");
  EXPECT_EQ(expand("f({1x})"), "error: '{1x}' at column 3 is not a placeholder (a name in braces)");
}

// Load errors: the message and the line of the `nki` key.
std::string load_error(const std::string& nki, const std::string& names = "add = \"nl.add\"\nmul = \"nl.multiply\"\n") {
  std::string text = "[nki.names]\n" + names +
                     "[instr.scale]\n"
                     "operands = [\"x\"]\n"
                     "attrs = [{ name = \"op\", type = \"binop\", choices = [\"add\", \"mul\"] }]\n"
                     "shape = { x = \"[p, f]\" }\n"
                     "out = \"[p, f]\"\n"
                     "expr = \"apply(op, x, 2)\"\n"
                     "engines = [\"vector\"]\n"
                     "cost = \"f\"\n"
                     "nki = \"" + nki + "\"\n";
  sem::InstrTable t;
  try {
    t.load(text, "bad_isa.toml", sem::OpTable::builtin());
  } catch (const UserError& e) {
    return e.what();
  }
  return "ok: " + t.find("scale")->nki;
}

TEST(Nki, TemplateErrorsAtLoad) {
  const int line = 12;  // the nki key
  EXPECT_EQ(load_error("nisa.scale({x}, op={op}, n={f}, dt={dtype})"), "ok: nisa.scale({x}, op={op}, n={f}, dt={dtype})");
  EXPECT_EQ(load_error("nisa.scale({y})"),
            fmt::format("bad_isa.toml:{}:7: error: instruction 'scale': unknown placeholder '{{y}}' in nki (expected an "
                        "operand, out, an attribute, a pattern dim, engine or dtype)", line));
  EXPECT_EQ(load_error("nisa.scale({x}, op={op})", "add = \"nl.add\"\n"),
            fmt::format("bad_isa.toml:{}:7: error: instruction 'scale': nki uses '{{op}}', but 'mul' has no NKI spelling "
                        "(add it to [nki.names])", line - 1));
  EXPECT_EQ(load_error("nisa.scale({x}, engine={engine})"),
            fmt::format("bad_isa.toml:{}:7: error: instruction 'scale': nki uses '{{engine}}', but engine 'vector' has no "
                        "NKI spelling (add it to [nki.engines])", line));
  EXPECT_EQ(load_error("nisa.scale({x)"),
            fmt::format("bad_isa.toml:{}:7: error: instruction 'scale': malformed nki template: '{{' at column 12 is "
                        "not closed", line));
}

TEST(Nki, InstructionWithoutTemplateIsAUserError) {
  Program p = tiled_exp();
  sem::InstrSpec bare = *p.insts[1].spec;
  bare.nki.clear();
  p.insts[1].spec = &bare;
  EXPECT_THROW(emit_nki(p, {"x"}), UserError);
  EXPECT_THROW(emit_nki(tiled_exp(), {}), InternalError);
}

}  // namespace
}  // namespace ts::lower

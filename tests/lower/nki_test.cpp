#include "tilesweep/lower/nki.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "tilesweep/base/source.h"
#include "tilesweep/lower/nki_shapes.h"
#include "tilesweep/lower/program_builder.h"
#include "tilesweep/lower/program_printer.h"
#include "tilesweep/lower/software_pipeline.h"
#include "tilesweep/target/target.h"

namespace ts::lower {
namespace {

namespace fs = std::filesystem;

// Appends buffers, loops and instructions to a program (instructions from the bundled trn2 ISA).
struct Builder {
  ProgramBuilder builder;
  Program& p = builder.program();

  explicit Builder(const std::string& kernel) : builder(kernel) {}
  int buffer(const std::string& name, sem::Memory m, std::vector<std::int64_t> shape,
             int param = -1, int output = -1) {
    Buffer b;
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
  Inst& inst(int block, const std::string& instr, std::vector<int> in, int out,
             sem::AttrMap attrs = {}, const std::string& note = "") {
    Inst i;
    i.spec = target::builtin_target("trn2").isa.find(instr);
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
  b.inst(0, "memset", {}, zero, {{"value", 0.0}, {"P", sem::Dim(128)}, {"F", sem::Dim(1)}},
         "zero bias");
  int i = b.loop(0, "i", 2), j = b.loop(i, "j", 2);
  b.dma(j, false, x, xt, {128, 512}, {{{i, 128}}, {{j, 512}}}, {0, 1});
  b.inst(j, "activation", {xt, zero}, yt, {{"func", std::string("exp")}}, "y = exp(x)");
  b.dma(j, true, y, yt, {128, 512}, {{{i, 128}}, {{j, 512}}}, {0, 1});
  return b.p;
}

// `copy`: the instruction that brings x^T out of PSUM (tensor_copy, or one that changes values).
Program tiled_matmul_via(const char* copy) {
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
  b.inst(k, copy, {xtp}, xts);
  b.dma(k, false, w, wt, {128, 512}, {{{k, 128}}, {{n, 512}}}, {0, 1});
  b.inst(k, "nc_matmul", {xts, wt}, acc, {}, "acc += x^T w").accumulate_block = k;
  b.inst(n, "tensor_copy", {acc}, res).engine = sem::Engine::Scalar;
  b.dma(n, true, out, res, {128, 512}, {{{m, 128}}, {{n, 512}}}, {0, 1});
  b.p.config = "tiles 128x512, K loop sequential";
  return b.p;
}

Program tiled_matmul() { return tiled_matmul_via("tensor_copy"); }

// A row max accumulated across the column tiles of x [128, 384].
Program tiled_row_max() {
  Builder b("row max");
  int x = b.buffer("x", sem::Memory::Hbm, {128, 384}, 0);
  int y = b.buffer("y", sem::Memory::Hbm, {128, 1}, -1, 0);
  int t = b.buffer("t", sem::Memory::Sbuf, {128, 128});
  int r = b.buffer("r", sem::Memory::Psum, {128, 1});
  int j = b.loop(0, "j", 3);
  b.dma(j, false, x, t, {128, 128}, {{}, {{j, 128}}}, {0, 1});
  b.inst(j, "tensor_reduce", {t}, r, {{"op", std::string("max")}}).accumulate_block = j;
  b.dma(0, true, y, r, {128, 1}, {{}, {}}, {0, 1});
  return b.p;
}

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
  b.inst(j, "tensor_reduce", {u}, r, {{"op", std::string("max")}}, "r = max(x)").accumulate_block =
      i;
  b.dma(j, true, y, t, {128, 128}, {{}, {{i, 256}, {j, 128}}}, {0, 1});
  b.dma(0, true, s, r, {128, 1}, {{}, {}}, {0, 1});
  return b.p;
}

// A scalar parameter (eps) is a Python number: its broadcast load becomes a memset of it.
Program scalar_param() {
  Builder b("scalar param");
  int x = b.buffer("x", sem::Memory::Hbm, {128, 64}, 0);
  int eps = b.buffer("eps", sem::Memory::Hbm, {1}, 1);
  int y = b.buffer("y", sem::Memory::Hbm, {128, 64}, -1, 0);
  int xt = b.buffer("xt", sem::Memory::Sbuf, {128, 64});
  int et = b.buffer("et", sem::Memory::Sbuf, {128, 1});
  int yt = b.buffer("yt", sem::Memory::Sbuf, {128, 64});
  b.dma(0, false, x, xt, {128, 64}, {{}, {}}, {0, 1});
  b.dma(0, false, eps, et, {1}, {{}}, {-1}).note = "load eps";
  b.inst(0, "tensor_scalar", {xt, et}, yt, {{"op0", std::string("add")}}, "y = x + eps");
  b.dma(0, true, y, yt, {128, 64}, {{}, {}}, {0, 1});
  return b.p;
}

// One emitted kernel per case and dialect, golden in tests/lower/golden/NAME_DIALECT.py
// (rewritten when TS_UPDATE_GOLDEN is set; review the diff). Materialized kernels join with one
// line each, e.g. {"rmsnorm_matmul", [] { return <materialize(...)>; }, {{"x"}, {"w"}, {"eps",
// true, 1e-6}}}.
struct Case {
  const char* name;
  std::function<Program()> build;
  std::vector<NkiParam> params;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"tiled_exp", tiled_exp, {{"x"}}},
      {"tiled_matmul", tiled_matmul, {{"x"}, {"w"}}},
      {"dma_views", dma_views, {{"x"}, {"bias"}}},
      {"scalar_param", scalar_param, {{"x"}, {"eps", true, 1e-6}}},
  };
  return c;
}

TEST(Nki, EmitsGoldenSources) {
  for (const Case& c : cases())
    for (NkiApi api : {NkiApi::Current, NkiApi::Legacy}) {
      std::string got = emit_nki(c.build(), c.params, api);
      std::string file = std::string(c.name) + "_" + nki_api_name(api) + ".py";
      fs::path golden = fs::path(TS_SOURCE_DIR) / "tests" / "lower" / "golden" / file;
      if (std::getenv("TS_UPDATE_GOLDEN")) std::ofstream(golden) << got;
      EXPECT_EQ(got, read_text_file(golden.string()))
          << file << " (TS_UPDATE_GOLDEN=1 rewrites " << golden << ")";
    }
}

// The dialects differ where the APIs do: imports, dst= calls, loops, zeroing, transposed loads.
TEST(Nki, DialectsUseTheirOwnConstructs) {
  struct Row {
    NkiApi api;
    std::vector<std::string> has, lacks;
  };
  const std::vector<Row> rows = {
      {NkiApi::Current,
       {"import nki\n",
        "for k in range(3):", "nisa.memset(dst=acc, value=0.0, engine=nisa.engine.vector)",
        "nisa.nc_matmul(dst=acc, stationary=xT, moving=wt, accumulate=True)",
        "buffer=nl.shared_hbm"},
       {"neuronxcc", "affine_range", "sequential_range", "nl.zeros", "= nisa.", ".T"}},
      {NkiApi::Legacy,
       {"import neuronxcc.nki as nki", "nl.sequential_range(3)",
        "acc[...] += nisa.nc_matmul(xT, wt)",
        "nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)"},
       {"import nki\n", "dst=acc", ".T"}},
  };
  for (const Row& r : rows) {
    std::string got = emit_nki(tiled_matmul(), std::vector<std::string>{"x", "w"}, r.api);
    for (const auto& s : r.has)
      EXPECT_NE(got.find(s), std::string::npos) << nki_api_name(r.api) << ": " << s;
    for (const auto& s : r.lacks)
      EXPECT_EQ(got.find(s), std::string::npos) << nki_api_name(r.api) << ": " << s;
  }
}

// Documented rewrites: divides as reciprocal multiplications, an unused op1 as None, PSUM in fp32.
TEST(Nki, RewritesUndocumentedForms) {
  Builder b("rewrites");
  int x = b.buffer("x", sem::Memory::Hbm, {128, 64}, 0);
  int y = b.buffer("y", sem::Memory::Hbm, {128, 64}, -1, 0);
  int xt = b.buffer("xt", sem::Memory::Sbuf, {128, 64});
  int d = b.buffer("d", sem::Memory::Sbuf, {128, 1});
  int q = b.buffer("q", sem::Memory::Sbuf, {128, 64});
  int r = b.buffer("r", sem::Memory::Sbuf, {128, 64});
  b.p.buffers[xt].dtype = ir::DType::BF16;
  b.dma(0, false, x, xt, {128, 64}, {{}, {}}, {0, 1});
  b.inst(0, "memset", {}, d, {{"value", 4.0}, {"P", sem::Dim(128)}, {"F", sem::Dim(1)}});
  b.inst(0, "tensor_scalar", {xt, d}, q, {{"op0", std::string("div")}});
  b.inst(0, "tensor_tensor", {q, xt}, r, {{"op", std::string("div")}});
  b.dma(0, true, y, r, {128, 64}, {{}, {}}, {0, 1});
  for (NkiApi api : {NkiApi::Current, NkiApi::Legacy}) {
    std::string got = emit_nki(b.p, std::vector<std::string>{"x"}, api);
    EXPECT_EQ(got.find("nl.divide"), std::string::npos) << got;
    EXPECT_NE(got.find("op1=None, operand1=None"), std::string::npos) << got;
    EXPECT_NE(got.find("nisa.reciprocal("), std::string::npos) << got;
    EXPECT_NE(got.find("assert tuple(x.shape) == (128, 64)"), std::string::npos) << got;
  }
}

// A transposing store has no documented form: a UserError, not undocumented code.
TEST(Nki, TransposingStoreIsAUserError) {
  Builder b("store_t");
  int y = b.buffer("y", sem::Memory::Hbm, {64, 128}, -1, 0);
  int t = b.buffer("t", sem::Memory::Sbuf, {128, 64});
  b.inst(0, "memset", {}, t, {{"value", 1.0}, {"P", sem::Dim(128)}, {"F", sem::Dim(64)}});
  b.dma(0, true, y, t, {64, 128}, {{}, {}}, {1, 0});
  for (NkiApi api : {NkiApi::Current, NkiApi::Legacy})
    EXPECT_THROW(emit_nki(b.p, std::vector<std::string>{}, api), UserError);
}

// A loop with skipped iterations (Block::guard: a causal mask's fully masked tiles): the current
// dialect's loops run over Python integers at trace time, so the guard is an `if` on the loop
// variables around the loop's body; the legacy dialect's iterators are not integers, so it is
// refused there with the loop named, never emitted computing every tile.
TEST(Nki, GuardedLoopIsAnIfInTheCurrentDialect) {
  Program p = tiled_exp();
  p.blocks[2].guard = Guard{{{1, 128}, {2, -512}}, 127};
  std::string py = emit_nki(p, std::vector<std::string>{"x"}, NkiApi::Current);
  std::size_t loop = py.find("for j in range(2):\n");
  ASSERT_NE(loop, std::string::npos) << py;
  std::size_t indent = loop - py.rfind('\n', loop) - 1;
  std::string guard = std::string(indent + 4, ' ') + "if i * 128 + j * -512 + 127 >= 0:\n";
  EXPECT_EQ(py.compare(loop + 19, guard.size(), guard), 0) << py;
  // The body one level deeper than the `if`.
  std::string body = std::string(indent + 8, ' ');
  EXPECT_EQ(py.compare(loop + 19 + guard.size(), body.size(), body), 0) << py;
  try {
    emit_nki(p, std::vector<std::string>{"x"}, NkiApi::Legacy);
    ADD_FAILURE() << "emitted a guarded loop in the legacy dialect";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("loop 'j' skips the tiles a mask covers entirely"),
              std::string::npos)
        << e.what();
  }
}

// Partial last tiles (nki_partial_tiles.cpp): a loop may end on a partial tile when nothing
// reduces across the lanes past the end, or only a sum of products does whose factors are
// zero-filled there and reach it through copies and transposes. tiled_matmul's m loop may (its
// rows reach the store through a transpose and the matmul's m), and so may its k loop, zero-filled
// (k is contracted and accumulated; x^T comes out of PSUM by a copy); not when x^T comes out
// through an instruction that changes values (reciprocal(0) is not 0), nor for a max.
TEST(Nki, PartialTilesOnlyWhereNothingReducesAcrossThem) {
  std::map<int, std::vector<std::string>> exp_shape = {{0, {"M", "N"}}, {1, {"M", "N"}}};
  auto exp_loops = partial_loops(tiled_exp(), {{1, {"M", 128}}, {2, {"N", 512}}}, exp_shape);
  EXPECT_EQ(exp_loops.size(), 2u);
  std::map<int, std::vector<std::string>> mm_shape = {
      {0, {"M", "K"}}, {1, {"K", "N"}}, {2, {"M", "N"}}};
  struct Row {
    const char* what;
    Program program;
    std::map<int, PartialLoop> candidates;
    std::map<int, bool> want;  // partial loop -> zero-filled
  };
  const std::vector<Row> rows = {
      {"matmul, x^T copied",
       tiled_matmul(),
       {{1, {"M", 128}}, {3, {"K", 128}}},
       {{1, false}, {3, true}}},
      {"matmul, x^T through reciprocal",
       tiled_matmul_via("reciprocal"),
       {{1, {"M", 128}}, {3, {"K", 128}}},
       {{1, false}}},
      {"row max", tiled_row_max(), {{1, {"N", 128}}}, {}},
  };
  for (const Row& r : rows) {
    auto shape = r.what == std::string("row max")
                     ? std::map<int, std::vector<std::string>>{{0, {"", "N"}}}
                     : mm_shape;
    auto got = partial_loops(r.program, r.candidates, shape);
    std::map<int, bool> zero;
    for (const auto& [b, loop] : got) zero[b] = loop.zero_fill;
    EXPECT_EQ(zero, r.want) << r.what;
  }
  // A tensor dim that is not exactly the generic dim (a fixed size) keeps the multiple.
  std::map<int, std::vector<std::string>> fixed = {{0, {"", "N"}}, {1, {"", "N"}}};
  EXPECT_EQ(partial_loops(tiled_exp(), {{1, {"M", 128}}}, fixed).size(), 0u);
}

// The emitted partial tiles: min()-cut slices (current), nl.arange indices and mask= (legacy).
TEST(Nki, EmitsPartialTilesPerDialect) {
  NkiShapes shapes;
  shapes.defs = {{"M", "x.shape[0]"}};
  shapes.generic = {"M"};
  shapes.hbm_shape = {{0, {"M", ""}}, {1, {"M", ""}}};
  shapes.trips = {{1, "(M + 127) // 128"}};
  shapes.partial = {{1, {"M", 128}}};
  shapes.partial_dims = {"M"};
  std::vector<NkiParam> params = {{"x"}};
  std::string cur = emit_nki(tiled_exp(), params, NkiApi::Current, &shapes);
  for (const char* s : {"# partial last tiles: M", "for i in range((M + 127) // 128):",
                        "nisa.dma_copy(dst=xt[0 : min(128, M - i * 128), :], src=x[i * 128 : "
                        "min(M, i * 128 + 128), j * 512 : j * 512 + 512])"})
    EXPECT_NE(cur.find(s), std::string::npos) << s << "\n" << cur;
  std::string leg = emit_nki(tiled_exp(), params, NkiApi::Legacy, &shapes);
  for (const char* s : {"i_p = nl.arange(128)[:, None]", "i_f = nl.arange(512)[None, :]",
                        "nisa.dma_copy(dst=xt[i_p, i_f], src=x[i * 128 + i_p, j * 512 + i_f], "
                        "mask=(i * 128 + i_p < M))"})
    EXPECT_NE(leg.find(s), std::string::npos) << s << "\n" << leg;
}

// takes_shape: generic dims at any multiple of what they need (1: partial last tiles), fixed
// dims exactly.
TEST(Nki, GenericKernelTakesTheShapesItsAssertsAllow) {
  NkiShapes shapes;
  shapes.generic = {"M", "N"};
  shapes.multiple = {{"M", 1}, {"N", 128}};
  sem::DimEnv built = {{"M", 256}, {"N", 256}, {"K", 64}};
  struct Row {
    sem::DimEnv asked;
    bool takes;
    std::string why;
  };
  const std::vector<Row> rows = {
      {{{"M", 300}, {"N", 384}, {"K", 64}}, true, ""},
      {{{"M", 1}, {"N", 128}, {"K", 64}}, true, ""},
      {{{"M", 300}, {"N", 300}, {"K", 64}}, false, "its N must be a multiple of 128"},
      {{{"M", 300}, {"N", 256}, {"K", 32}}, false, "K is fixed at 64 in it"},
      {{{"M", 0}, {"N", 256}, {"K", 64}}, false, "its M must be a multiple of 1"},
      {{{"M", 300}, {"N", 256}}, false, "no K given"},
  };
  for (const Row& r : rows) {
    std::string why;
    EXPECT_EQ(takes_shape(shapes, built, r.asked, &why), r.takes) << r.why;
    EXPECT_EQ(why, r.why);
  }
}

TEST(Nki, ParsesTheDialectFlag) {
  EXPECT_EQ(parse_nki_api("current"), NkiApi::Current);
  EXPECT_EQ(parse_nki_api("legacy"), NkiApi::Legacy);
  EXPECT_THROW(parse_nki_api("2.26"), UserError);
}

// Every emitted kernel is valid Python (the NKI compiler itself is not available here).
TEST(Nki, EmittedSourcesCompileAsPython) {
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  fs::path dir = fs::temp_directory_path() / ("tilesweep_nki_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const Case& c : cases()) {
    fs::path file = dir / (std::string(c.name) + ".py");
    std::ofstream(file) << emit_nki(c.build(), c.params, NkiApi::Current);
    std::ofstream(dir / (std::string(c.name) + "_legacy.py"))
        << emit_nki(c.build(), c.params, NkiApi::Legacy);
    std::string legacy = "/usr/bin/python3 -m py_compile '" +
                         (dir / (std::string(c.name) + "_legacy.py")).string() + "'";
    EXPECT_EQ(std::system(legacy.c_str()), 0) << legacy;
    std::string cmd = "/usr/bin/python3 -m py_compile '" + file.string() + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  fs::remove_all(dir);
}

TEST(Nki, EveryBundledInstructionHasATemplate) {
  for (const auto& target : target::builtin_target_names()) {
    const auto& isa = target::builtin_target(target).isa;
    for (const auto& name : isa.names()) {
      EXPECT_FALSE(isa.find(name)->nki.empty()) << target << ": " << name;
      EXPECT_FALSE(isa.find(name)->nki_current.empty()) << target << ": " << name;
    }
  }
}

TEST(Nki, ExpandsTemplates) {
  auto expand = [](const std::string& t) {
    std::string error;
    std::string out = sem::expand_nki(
        t, [](const std::string& k) { return "<" + k + ">"; }, &error);
    return error.empty() ? out : "error: " + error;
  };
  EXPECT_EQ(expand("nisa.f({x}, op={op0})"), "nisa.f(<x>, op=<op0>)");
  EXPECT_EQ(expand("{{literal}} {x}"), "{literal} <x>");
  EXPECT_EQ(expand("f({x.y})"),
            "error: '{x.y}' at column 3 is not a placeholder (a name in braces)");
  EXPECT_EQ(expand("f({x"), "error: '{' at column 3 is not closed");
  EXPECT_EQ(expand("f(x})"),
            "error: '}' at column 4 closes nothing (write '}}' for a literal brace)");
  EXPECT_EQ(expand("f({1x})"), "error: '{1x}' at column 3 is not a placeholder (a name in braces)");
}

// Load errors: the message and the line of the `nki` key.
std::string load_error(const std::string& nki,
                       const std::string& names = "add = \"nl.add\"\nmul = \"nl.multiply\"\n") {
  std::string text = "[nki.names]\n" + names +
                     "[instr.scale]\n"
                     "operands = [\"x\"]\n"
                     "attrs = [{ name = \"op\", type = \"binop\", choices = [\"add\", \"mul\"] }]\n"
                     "shape = { x = \"[p, f]\" }\n"
                     "out = \"[p, f]\"\n"
                     "expr = \"apply(op, x, 2)\"\n"
                     "engines = [\"vector\"]\n"
                     "cost = \"f\"\n"
                     "nki = \"" +
                     nki + "\"\n";
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
  EXPECT_EQ(load_error("nisa.scale({x}, op={op}, n={f}, dt={dtype})"),
            "ok: nisa.scale({x}, op={op}, n={f}, dt={dtype})");
  EXPECT_EQ(load_error("nisa.scale({y})"),
            fmt::format("bad_isa.toml:{}:7: error: instruction 'scale': unknown placeholder "
                        "'{{y}}' in nki (expected an "
                        "operand, out, an attribute, a pattern dim, engine or dtype)",
                        line));
  EXPECT_EQ(load_error("nisa.scale({x}, op={op})", "add = \"nl.add\"\n"),
            fmt::format("bad_isa.toml:{}:7: error: instruction 'scale': nki uses '{{op}}', but "
                        "'mul' has no NKI spelling "
                        "(add it to [nki.names])",
                        line - 1));
  EXPECT_EQ(load_error("nisa.scale({x}, engine={engine})"),
            fmt::format("bad_isa.toml:{}:7: error: instruction 'scale': nki uses '{{engine}}', but "
                        "engine 'vector' has no "
                        "NKI spelling (add it to [nki.engines])",
                        line));
  EXPECT_EQ(load_error("nisa.scale({x)"),
            fmt::format("bad_isa.toml:{}:7: error: instruction 'scale': malformed nki template: "
                        "'{{' at column 12 is "
                        "not closed",
                        line));
}

// A windowed operand is its columns at the window's loop terms plus its offset (a streamed
// running max: the tile's partial at column 1 of [rows, 2], folded with the running value at
// column 0; dropping the offset wrote the partial over the running value, NaN on the harness).
TEST(Nki, WindowsKeepTheirOffset) {
  struct Case {
    Window w;
    std::string slice;
  };
  const std::vector<Case> cases = {
      {{{}, 1, 0}, "run[:, 0 : 1]"},
      {{{}, 1, 1}, "run[:, 1 : 2]"},
      {{{}, 2, 0}, "run[:, 0 : 2]"},
      {{{{1, 2}}, 1, 1}, "run[:, j * 2 + 1 : j * 2 + 1 + 1]"},
      // A strided window (Window::step): a Python slice with a step.
      {{{}, 2, 0, 2}, "run[:, 0 : 3 : 2]"},
      {{{}, 2, 1, 2}, "run[:, 1 : 4 : 2]"},
      {{{{1, 2}}, 2, 1, 3}, "run[:, j * 2 + 1 : j * 2 + 1 + 4 : 3]"},
  };
  for (const auto& c : cases) {
    Builder b("running max");
    int x = b.buffer("x", sem::Memory::Hbm, {128, 1024}, 0);
    int y = b.buffer("y", sem::Memory::Hbm, {128, 1}, -1, 0);
    int t = b.buffer("t", sem::Memory::Sbuf, {128, 512});
    int run = b.buffer("run", sem::Memory::Sbuf, {128, 4});
    int j = b.loop(0, "j", 2);
    ASSERT_EQ(j, 1);  // the block the case's terms name
    b.dma(j, false, x, t, {128, 512}, {{}, {{j, 512}}}, {0, 1});
    b.inst(j, "tensor_reduce", {t}, run, {{"op", std::string("max")}}).out_window = c.w;
    b.dma(0, true, y, run, {128, 1}, {{}, {}}, {0, 1}).in_window = {Window{{}, 1, 0}};
    for (NkiApi api : {NkiApi::Current, NkiApi::Legacy}) {
      std::string text = emit_nki(b.p, std::vector<std::string>{"x"}, api);
      EXPECT_NE(text.find(c.slice), std::string::npos) << c.slice << "\n" << text;
    }
  }
}

// The program printer shows a window's step where it is not 1.
TEST(ProgramPrinter, StridedWindowsShowTheirStep) {
  struct Case {
    Window w;
    std::string text;
  };
  const std::vector<Case> cases = {
      {{{}, 256, 0, 1}, "t[:, 0 +: 256])"},
      {{{}, 256, 1, 2}, "t[:, 1 +: 256 step 2])"},
      {{{{1, 512}}, 128, 3, 4}, "t[:, j*512 + 3 +: 128 step 4])"},
  };
  for (const auto& c : cases) {
    Builder b("strided");
    int x = b.buffer("x", sem::Memory::Hbm, {128, 1024}, 0);
    int t = b.buffer("t", sem::Memory::Sbuf, {128, 512});
    int y = b.buffer("y", sem::Memory::Sbuf, {128, 256});
    int j = b.loop(0, "j", 2);
    b.dma(j, false, x, t, {128, 512}, {{}, {{j, 512}}}, {0, 1});
    b.inst(j, "tensor_copy", {t}, y).in_window = {c.w};
    std::string text = print_program(b.p);
    EXPECT_NE(text.find(c.text), std::string::npos) << c.text << "\n" << text;
  }
}

// A software-pipelined loop (software_pipeline.h): x's tiles loaded one column tile ahead of the
// exp that reads them. The handed-over tile is one array of copies along a dim after the
// partition dim, written at `(j + 1) % copies` and read at `j % copies` (lag 1) in the loop, at
// copy 0 by the prologue and at the last version's copy by the epilogue; the legacy dialect's
// loop is a sequential_range (it carries the hand-over). `lines`: in this order in the source.
TEST(Nki, PipelinedLoopRotatesTheHandedOverTile) {
  struct Case {
    std::int64_t trips;  // of the loop before pipelining
    int bufs;            // of the handed-over tile
    NkiApi api;
    std::vector<std::string> lines;
  };
  const std::vector<Case> cases = {
      {3,
       1,
       NkiApi::Current,
       {"xt = nl.ndarray((128, 2, 512), dtype=nl.float32, buffer=nl.sbuf)  # 2 copies, one per "
        "iteration of 'j' in flight (pipelined)",
        "nisa.dma_copy(dst=xt[:, 0, :], src=x[i * 128 : i * 128 + 128, 0 : 512])",
        "for j in range(2):",
        "nisa.dma_copy(dst=xt[:, (j + 1) % 2, :], src=x[i * 128 : i * 128 + 128, j * 512 + 512 : "
        "j * 512 + 512 + 512])",
        "nisa.activation(dst=yt, op=nl.exp, data=xt[:, j % 2, :]",
        "nisa.dma_copy(dst=y[i * 128 : i * 128 + 128, j * 512 : j * 512 + 512], src=yt)",
        // the epilogue reads version 2, copy 0
        "nisa.activation(dst=yt, op=nl.exp, data=xt[:, 0, :]",
        "nisa.dma_copy(dst=y[i * 128 : i * 128 + 128, 1024 : 1536], src=yt)"}},
      {2,
       1,
       NkiApi::Current,
       {"for j in range(1):", "data=xt[:, j % 2, :]",
        // the epilogue reads version 1, copy 1
        "nisa.activation(dst=yt, op=nl.exp, data=xt[:, 1, :]"}},
      // Three copies where the tile was triple-buffered: the epilogue's version 3 is copy 0.
      {4,
       3,
       NkiApi::Current,
       {"xt = nl.ndarray((128, 3, 512)", "dst=xt[:, 0, :]", "for j in range(3):",
        "dst=xt[:, (j + 1) % 3, :]", "data=xt[:, j % 3, :]", "data=xt[:, 0, :]"}},
      {3,
       1,
       NkiApi::Legacy,
       {"xt = nl.ndarray((128, 2, 512), dtype=nl.float32, buffer=nl.sbuf)",
        "nisa.dma_copy(dst=xt[:, 0, :], src=x[i * 128 : i * 128 + 128, 0 : 512])",
        "for j in nl.sequential_range(2):", "nisa.dma_copy(dst=xt[:, (j + 1) % 2, :], src=",
        "yt[...] = nisa.activation(op=nl.exp, data=xt[:, j % 2, :]",
        "yt[...] = nisa.activation(op=nl.exp, data=xt[:, 0, :]"}},
  };
  for (const auto& c : cases) {
    Builder b("pipelined exp");
    int x = b.buffer("x", sem::Memory::Hbm, {256, 512 * c.trips}, 0);
    int y = b.buffer("y", sem::Memory::Hbm, {256, 512 * c.trips}, -1, 0);
    int zero = b.buffer("zero", sem::Memory::Sbuf, {128, 1});
    int xt = b.buffer("xt", sem::Memory::Sbuf, {128, 512});
    int yt = b.buffer("yt", sem::Memory::Sbuf, {128, 512});
    b.p.buffers[xt].bufs = c.bufs;
    b.inst(0, "memset", {}, zero, {{"value", 0.0}, {"P", sem::Dim(128)}, {"F", sem::Dim(1)}});
    int i = b.loop(0, "i", 2), j = b.loop(i, "j", c.trips);
    b.dma(j, false, x, xt, {128, 512}, {{{i, 128}}, {{j, 512}}}, {0, 1});
    b.inst(j, "activation", {xt, zero}, yt, {{"func", std::string("exp")}});
    b.dma(j, true, y, yt, {128, 512}, {{{i, 128}}, {{j, 512}}}, {0, 1});
    ASSERT_EQ(pipeline_loop(b.p, j, 1), std::nullopt);
    ASSERT_TRUE(pipelined(b.p));
    std::string py = emit_nki(b.p, std::vector<std::string>{"x"}, c.api);
    std::size_t at = 0;
    for (const auto& l : c.lines) {
      std::size_t found = py.find(l, at);
      ASSERT_NE(found, std::string::npos) << "after offset " << at << ": " << l << "\n" << py;
      at = found + l.size();
    }
  }
}

TEST(Nki, InstructionWithoutTemplateIsAUserError) {
  Program p = tiled_exp();
  sem::InstrSpec bare = *p.insts[1].spec;
  bare.nki.clear();
  bare.nki_current.clear();
  p.insts[1].spec = &bare;
  EXPECT_THROW(emit_nki(p, std::vector<std::string>{"x"}, NkiApi::Current), UserError);
  EXPECT_THROW(emit_nki(p, std::vector<std::string>{"x"}, NkiApi::Legacy), UserError);
  EXPECT_THROW(emit_nki(tiled_exp(), std::vector<std::string>{}), InternalError);
}

}  // namespace
}  // namespace ts::lower

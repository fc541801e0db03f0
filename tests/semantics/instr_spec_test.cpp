#include "tilesweep/semantics/instr_spec.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tilesweep/semantics/instantiate.h"

namespace ts::sem {
namespace {

const char* kIsa = R"isa(
[instr.nc_matmul]
operands = ["stationary", "moving"]
shape = { stationary = "[k, m]", moving = "[k, n]" }
out = "[m, n]"
contract = ["k"]
expr = "sum(k, stationary * moving)"
engines = ["tensor"]
memory = { stationary = ["sbuf"], moving = ["sbuf"], out = ["psum"] }
limits = { k = 128, m = 128, n = 512 }
cost = "maximum(minimum(64, m), n) * select(fp32, 4, 1)"

[instr.activation]
operands = ["x", "bias"]
attrs = [{ name = "func", type = "func" }, { name = "scale", type = "float", default = 1.0 }]
funcs = ["copy", "exp", "silu"]
shape = { x = "[p, f]", bias = "[p, 1]" }
out = "[p, f]"
expr = "apply(func, x * scale + bias[p, 0])"
engines = ["scalar"]
cost = "maximum(MIN_II, N)"

[instr.tensor_reduce]
operands = ["x"]
attrs = [{ name = "op", type = "reduceop" }]
reduceops = ["add", "max"]
shape = { x = "[p, f]" }
out = "[p, 1]"
contract = ["f"]
expr = "reduce(op, f, x)"
engines = ["vector"]
cost = "N"
)isa";

TEST(InstrTable, LoadsSemanticsAndHardwareFacts) {
  InstrTable t;
  t.load(kIsa, "isa.toml", OpTable::builtin());
  const InstrSpec* mm = t.find("nc_matmul");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->engines, std::vector<Engine>{Engine::Tensor});
  EXPECT_EQ(mm->limits.at("n"), 512);
  EXPECT_EQ(mm->memory.at("out"), std::vector<Memory>{Memory::Psum});
}

TEST(InstrTable, ApplyAndReduceInlineTheNamedOps) {
  InstrTable t;
  t.load(kIsa, "isa.toml", OpTable::builtin());
  Dim P = Dim::symbol("P"), F = Dim::symbol("F");
  auto act = instantiate(t.find("activation")->op, {{P, F}, {P, 1}},
                         {{"func", std::string("silu")}, {"scale", 2.0}}, {});
  EXPECT_EQ(act.body.str(),
            "(((in0[p, f] * 2) + in1[p, 0]) / (1 + exp(-((in0[p, f] * 2) + in1[p, 0]))))");
  auto red = instantiate(t.find("tensor_reduce")->op, {{P, F}}, {{"op", std::string("max")}}, {});
  EXPECT_EQ(red.body.str(), "max(f < size(F), in0[p, f])");
  EXPECT_THROW(
      instantiate(t.find("activation")->op, {{P, F}, {P, 1}}, {{"func", std::string("gelu")}}, {}),
      UserError);
}

// Which operands an instruction may write its result over in place comes from its semantics
// (pattern, contraction, how the expression indexes it), here on the real trn1 ISA.
TEST(InstrTable, ElementwiseOperandsComeFromTheSemantics) {
  std::ifstream f(std::string(TS_SOURCE_DIR) + "/src/targets/trn1/isa.toml");
  std::stringstream text;
  text << f.rdbuf();
  InstrTable t;
  t.load(text.str(), "isa.toml", OpTable::builtin());
  struct Case {
    const char* instr;
    std::vector<bool> elementwise;
  };
  const Case cases[] = {
      {"tensor_copy", {true}},
      {"tensor_tensor", {true, true}},
      {"tensor_scalar", {true, false}},  // operand0 is one value per partition
      {"scalar_tensor_tensor", {true, false, true}},
      {"activation", {true, false}},          // bias is [p, 1]
      {"activation_reduce", {false, false}},  // a [p, 1] result
      {"reciprocal", {true}},
      {"affine_select", {true}},
      {"nc_transpose_pe", {false}},   // reads x[p, f] into out[f, p]
      {"nc_matmul", {false, false}},  // contracts k
      {"tensor_reduce", {false}},
      {"tensor_tensor_scan", {false, false}},  // reads earlier elements of its row
      {"tensor_partition_reduce", {false}},
  };
  for (const Case& c : cases) {
    const InstrSpec* in = t.find(c.instr);
    ASSERT_NE(in, nullptr) << c.instr;
    EXPECT_EQ(in->elementwise_operand, c.elementwise) << c.instr;
  }
}

// The error of loading `text` as an isa.toml ("no error" when it loads).
std::string error(const std::string& text) {
  InstrTable t;
  try {
    t.load(text, "isa.toml", OpTable::builtin());
  } catch (const UserError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

TEST(InstrTable, BadEntriesAreClearErrors) {
  EXPECT_EQ(
      error("[instr.x]\noperands = [\"a\"]\nexpr = \"a\"\nengines = [\"warp\"]\ncost = \"1\"\n"),
      "isa.toml:4:11: error: unknown engine 'warp' (expected tensor, vector, scalar, gpsimd or "
      "dma)");
  EXPECT_EQ(error("[instr.x]\noperands = [\"a\"]\nshape = { a = \"[p, f]\" }\nout = \"[p, "
                  "f]\"\nexpr = \"a\"\nengines = [\"vector\"]\nlimits = { q = 4 }\ncost = \"1\"\n"),
            "isa.toml:7:16: error: instruction 'x': limit given for 'q', which is not a dim of its "
            "patterns (expected p or f)");
  EXPECT_EQ(error("[instr.x]\noperands = [\"a\"]\nexpr = \"a\"\nengines = [\"vector\"]\n"),
            "isa.toml:1:1: error: instruction 'x': missing string key 'cost'");
}

// Unknown keys of an ISA file's tables name the closest known key, or the keys there are.
TEST(InstrTable, UnknownKeysSuggest) {
  const std::string x =
      "[instr.x]\noperands = [\"src\", \"bias\"]\nshape = { src = \"[p, free]\", bias = \"[p, 1]\" "
      "}\n"
      "out = \"[p, free]\"\nexpr = \"src + bias\"\nengines = [\"vector\"]\ncost = \"1\"\n";
  struct Case {
    std::string text, want;
  };
  for (const auto& c : std::vector<Case>{
           {"[nki.nmes]\nx = \"y\"\n" + x,
            "isa.toml:1:1: error: unknown key 'nki.nmes'; did you mean 'names'?"},
           {"[legaliy]\nx = 1\n" + x,
            "isa.toml:1:1: error: unknown top-level key 'legaliy'; did you mean 'legality'? "
            "(instructions go in [instr.NAME] tables)"},
           {"[nki.spellings]\nx = \"y\"\n" + x,
            "isa.toml:1:1: error: unknown key 'nki.spellings' (expected names, engines or "
            "current_engines)"},
           {x + "memory = { bia = [\"sbuf\"] }\n",
            "isa.toml:8:18: error: instruction 'x': memory given for 'bia', which is not an "
            "operand or out; did you "
            "mean 'bias'?"},
           {x + "memory = { result = [\"sbuf\"] }\n",
            "isa.toml:8:21: error: instruction 'x': memory given for 'result', which is not an "
            "operand or out "
            "(expected src, bias or out)"},
           {x + "limits = { fre = 512 }\n",
            "isa.toml:8:18: error: instruction 'x': limit given for 'fre', which is not a dim of "
            "its patterns; did you "
            "mean 'free'?"},
           {x + "limits = { rows = 512 }\n",
            "isa.toml:8:19: error: instruction 'x': limit given for 'rows', which is not a dim of "
            "its patterns "
            "(expected p or free)"},
       })
    EXPECT_EQ(error(c.text), c.want) << c.text;
}

}  // namespace
}  // namespace ts::sem

#include "tilesweep/semantics/instr_spec.h"

#include <gtest/gtest.h>

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

TEST(InstrTable, BadEntriesAreClearErrors) {
  auto error = [](const std::string& text) {
    InstrTable t;
    try {
      t.load(text, "isa.toml", OpTable::builtin());
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(
      error("[instr.x]\noperands = [\"a\"]\nexpr = \"a\"\nengines = [\"warp\"]\ncost = \"1\"\n"),
      "isa.toml:4:11: error: unknown engine 'warp' (expected tensor, vector, scalar, gpsimd or "
      "dma)");
  EXPECT_EQ(error("[instr.x]\noperands = [\"a\"]\nshape = { a = \"[p, f]\" }\nout = \"[p, "
                  "f]\"\nexpr = \"a\"\nengines = [\"vector\"]\nlimits = { q = 4 }\ncost = \"1\"\n"),
            "isa.toml:7:16: error: instruction 'x': limit given for 'q', which is not a dim of its "
            "patterns");
  EXPECT_EQ(error("[instr.x]\noperands = [\"a\"]\nexpr = \"a\"\nengines = [\"vector\"]\n"),
            "isa.toml:1:1: error: instruction 'x': missing string key 'cost'");
}

}  // namespace
}  // namespace ts::sem

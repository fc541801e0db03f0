#include <gtest/gtest.h>

#include "tilesweep/semantics/op_spec.h"

namespace ts::sem {
namespace {

TEST(OpTable, BuiltinHasTheLanguageOps) {
  const OpTable& t = OpTable::builtin();
  for (const char* op :
       {"matmul",        "transpose", "reshape",   "concat", "broadcast_to", "repeat",
        "exp",           "log",       "sqrt",      "rsqrt",  "reciprocal",   "square",
        "abs",           "relu",      "sigmoid",   "silu",   "gelu",         "tanh",
        "maximum",       "minimum",   "sum",       "mean",   "max",          "min",
        "cumsum",        "scan",      "slice",     "less",   "less_equal",   "greater",
        "greater_equal", "equal",     "not_equal", "where",  "iota",         "astype"})
    EXPECT_NE(t.find(op), nullptr) << op;
  EXPECT_EQ(t.find("matmul")->contract, std::vector<std::string>{"k"});
  EXPECT_EQ(t.find("where")->dtype_from, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(t.find("iota")->dtype_fixed, "f32");
  EXPECT_EQ(t.find("astype")->dtype_cast, "dtype");
  EXPECT_TRUE(t.find("less")->dtype_from.empty());  // default: every operand
}

std::string load_error(const std::string& text) {
  OpTable t;
  try {
    t.load(text, "user.toml");
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(OpTable, UserOpsLoad) {
  OpTable t = OpTable::builtin();
  t.load("[op.softplus]\noperands = [\"x\"]\nexpr = \"log(1 + exp(x))\"\n", "user.toml");
  ASSERT_NE(t.find("softplus"), nullptr);
  EXPECT_EQ(t.find("softplus")->broadcast, std::vector<std::string>{"S"});
}

TEST(OpTable, BadSpecsAreClearErrors) {
  struct Case {
    const char* toml;
    const char* error;
  } cases[] = {
      {"[op.f]\noperands = [\"x\"]\n", "user.toml:1:1: error: op 'f': missing string key 'expr'"},
      {"[op.f]\noperands = [\"x\"]\nexpr = \"exp(x\"\n",
       "user.toml:3:14: error: expected ')' in 'exp(x'"},
      {"[op.f]\noperands = [\"x\"]\nexpr = \"x\"\ncolour = 1\n",
       "user.toml:4:10: error: op 'f': unknown key 'colour'"},
      {"[op.f]\noperands = [\"x\"]\nexpr = \"x\"\nrequire = []\n",
       "user.toml:4:11: error: op 'f': unknown key 'require'; did you mean 'requires'?"},
      {"[op.f]\noperands = [\"x\"]\nattrs = [{ name = \"axis\", type = \"axis\", of = \"x\", "
       "defualt = 1 }]\nexpr = \"x\"\n",
       "user.toml:3:62: error: unknown attribute key 'defualt'; did you mean 'default'? (expected "
       "name, type, of, default, choices)"},
      {"[op.f]\noperands = [\"x\"]\nattrs = [{ name = \"axis\", type = \"axs\", of = \"x\" "
       "}]\nexpr = \"x\"\n",
       "user.toml:3:10: error: unknown attribute type 'axs' (expected bool, int, float, dim, dims, "
       "axis, axes, name, func, binop or reduceop)"},
      {"[op.f]\noperands = [\"a\", \"b\"]\nshape = { a = \"[m, k]\", b = \"[k, n]\" }\nout = \"[m, "
       "n]\"\ncontract = [\"m\"]\nexpr = \"a\"\n",
       "user.toml:1:1: error: op 'f': contract lists 'm', which is not an operand dim missing from "
       "the output"},
      {"x = 1\n", "user.toml:1:5: error: unknown top-level key 'x' (ops go in [op.NAME] tables)"},
      {"[op.f]\noperands = [\"x\"]\ndtype = \"promote(y)\"\nexpr = \"x\"\n",
       "user.toml:3:9: error: op 'f': dtype promotes 'y', which is not an operand"},
      {"[op.f]\noperands = [\"x\"]\ndtype = \"cast(x)\"\nexpr = \"x\"\n",
       "user.toml:3:9: error: op 'f': dtype casts to 'x', which is not a name attribute of the op"},
      {"[op.f]\noperands = [\"x\"]\ndtype = \"f64\"\nexpr = \"x\"\n",
       "user.toml:3:9: error: op 'f': dtype 'f64' is none of promote(operands...), "
       "cast(attribute), "
       "f32, bf16, f16, f8"},
      {"[op.f]\noperands = [\"x\"]\ndtype = 1\nexpr = \"x\"\n",
       "user.toml:3:9: error: op 'f': dtype must be a string: promote(operands...), "
       "cast(attribute) "
       "or a dtype"},
      {"[op.f\n",
       "user.toml:1:6: error: Error while parsing table header: expected ']', saw '\\n'"},
  };
  for (const auto& c : cases) EXPECT_EQ(load_error(c.toml), c.error);
}

TEST(OpTable, RedefinitionIsAnError) {
  OpTable t = OpTable::builtin();
  EXPECT_THROW(t.load("[op.exp]\noperands = [\"x\"]\nexpr = \"x\"\n", "user.toml"), UserError);
}

}  // namespace
}  // namespace ts::sem

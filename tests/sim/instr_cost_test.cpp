#include "tilesweep/target/instr_cost.h"

#include <gtest/gtest.h>

#include "tilesweep/ir/graph_edit.h"

namespace ts::sim {
namespace {

// x[P, F] -> nc_transpose_pe -> nc_matmul with y[F, K]: the matmul lowering synthesis finds.
ir::Kernel matmul_program(const target::Target& t) {
  ir::Kernel k;
  for (auto [name, shape] :
       {std::pair{"x", std::vector<sem::Dim>{sem::Dim::symbol("P"), sem::Dim::symbol("F")}},
        std::pair{"y", std::vector<sem::Dim>{sem::Dim::symbol("F"), sem::Dim::symbol("K")}}}) {
    ir::Node n;
    n.op = "input";
    n.shape = shape;
    n.param = static_cast<int>(k.params.size());
    k.params.push_back(ir::Param{
        name, false, ir::DType::F32, shape, std::nullopt, static_cast<int>(k.nodes.size()), {}});
    k.nodes.push_back(n);
  }
  int tr = ir::add_op(k, t.isa.find("nc_transpose_pe")->op, {0}, {}, {});
  k.outputs = {ir::add_op(k, t.isa.find("nc_matmul")->op, {tr, 1}, {}, {})};
  return k;
}

TEST(InstrCost, FormulasFromTheIsaAtConcreteTiles) {
  const target::Target& t = target::builtin_target("trn1");
  ir::Kernel p = matmul_program(t);
  sem::DimEnv env{{"P", 128}, {"F", 128}, {"K", 512}};
  // nc_matmul (S0): max(min(64, m), n) x4 for fp32 = 512 x 4 cycles at 2.8 GHz.
  EXPECT_NEAR(target::instr_ns(t, p, p.outputs[0], env), 2048 / 2.8, 1e-9);
  // The transpose costs what trn1's isa.toml says; the program is the serial sum.
  double tr = target::instr_ns(t, p, 2, env);
  EXPECT_GT(tr, 0);
  EXPECT_NEAR(target::program_ns(t, p, env), tr + 2048 / 2.8, 1e-9);
  // Half the moving free size, half the matmul time (above the 64-cycle floor).
  sem::DimEnv half{{"P", 128}, {"F", 128}, {"K", 256}};
  EXPECT_NEAR(instr_ns(t, p, p.outputs[0], half), 1024 / 2.8, 1e-9);
}

TEST(InstrCost, UnknownVariableIsAUserError) {
  sem::InstrTable isa;
  isa.load(
      "[instr.x]\noperands = [\"a\"]\nexpr = \"a\"\nengines = [\"vector\"]\ncost = \"W * 2\"\n",
      "isa.toml", sem::OpTable::builtin());
  EXPECT_THROW(target::formula_value(*isa.find("x"), {}), UserError);
}

}  // namespace
}  // namespace ts::sim

namespace ts::sim {
namespace {

TEST(InstrCost, EveryBundledFormulaEvaluates) {
  for (const auto& name : target::builtin_target_names()) {
    const target::Target& t = target::builtin_target(name);
    for (const auto& instr : t.isa.names()) {
      const sem::InstrSpec& in = *t.isa.find(instr);
      std::map<std::string, double> vars{{"N", 512},  {"P", 128},        {"MIN_II", 64},
                                         {"fp32", 1}, {"bytes", 262144}, {"psum_sbuf", 0}};
      for (const auto& p : in.op.shapes)
        for (const auto& it : p.items)
          if (!it.group && !it.name.empty()) vars[it.name] = 64;
      for (const auto& it : in.op.out.items)
        if (!it.group && !it.name.empty()) vars[it.name] = 64;
      for (const auto& a : in.op.attrs) vars[a.name] = 64;
      double v = -1;
      target::CostVars vars_of;  // views of the map's keys, which outlive it
      for (const auto& [k, x] : vars) vars_of.set(k, x);
      EXPECT_NO_THROW(v = target::formula_value(in, vars_of)) << name << " " << instr;
      EXPECT_GT(v, 0) << name << " " << instr;
    }
  }
}

}  // namespace
}  // namespace ts::sim

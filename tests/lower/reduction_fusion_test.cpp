// Reduction fusion (reduction_fusion.h, issue 17): the isa.toml `elementwise` identities proved
// with Z3 for every choice on trn1, trn2, trn3 (and a false one refused); the loader's checks;
// the pass on small programs (which pairs ride, which do not); the timeline's charge.
#include "tilesweep/lower/reduction_fusion.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../sim/program_builder.h"
#include "tilesweep/base/error.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/graph_edit.h"
#include "tilesweep/sim/simulate.h"
#include "tilesweep/target/target.h"
#include "tilesweep/verify/prove.h"

namespace ts::lower {
namespace {

const target::Target& target_of(const std::string& name) {
  static std::map<std::string, target::Target> loaded;
  auto it = loaded.find(name);
  if (it == loaded.end())
    it = loaded
             .emplace(name,
                      target::load_target_dir(std::string(TS_SOURCE_DIR) + "/src/targets/" + name))
             .first;
  return it->second;
}

// The reductions the identities are proved against, written here (not taken from the ISA).
const sem::OpTable& reducers() {
  static const sem::OpTable table = [] {
    sem::OpTable t;
    std::string text;
    for (auto [name, r] :
         {std::pair{"add", "sum"}, {"mul", "prod"}, {"max", "max"}, {"min", "min"}})
      text += fmt::format(
          "[op.reduce_{}]\noperands = [\"x\"]\nshape = {{ x = \"[p, f]\" }}\nout = \"[p, 1]\"\n"
          "contract = [\"f\"]\nexpr = \"{}(f, x)\"\n\n",
          name, r);
    t.load(text, "<reducers>");
    return t;
  }();
  return table;
}

// Kernels (x: [P, F], operands of [P, 1]) -> F(x, ..; attrs) and -> reduce(A(x, ..; attrs)).
struct ProofPair {
  ir::Kernel fused, split;
};
ProofPair proof_pair(const sem::InstrSpec& f, const sem::InstrSpec& a, const sem::AttrMap& attrs,
                     const std::string& reducer) {
  std::string params;
  for (std::size_t j = 0; j < f.op.operands.size(); ++j)
    params += fmt::format("{}{}: f32[P, {}]", j ? ", " : "", f.op.operands[j], j ? "1" : "F");
  ir::Kernel base = ir::parse_module(fmt::format("def k({}) -> f32[P, 1]:\n    return sum({}, "
                                                 "axis=1, keepdims=True)\n",
                                                 params, f.op.operands[0]),
                                     "<proof>", sem::OpTable::builtin())
                        .kernel("k");
  base.nodes.resize(base.params.size());
  base.outputs.clear();
  std::vector<int> in;
  for (std::size_t j = 0; j < base.params.size(); ++j) in.push_back(base.params[j].node);
  ProofPair out{base, base};
  sem::AttrMap fa = attrs;
  if (!f.reduce_attr.empty()) fa[f.reduce_attr] = reducer;
  out.fused.outputs = {ir::add_op(out.fused, f.op, in, fa, {})};
  sem::AttrMap aa;
  for (const auto& [k, v] : attrs)
    if (a.op.attr(k)) aa[k] = v;
  int e = ir::add_op(out.split, a.op, in, aa, {});
  out.split.outputs = {ir::add_op(out.split, *reducers().find("reduce_" + reducer), {e}, {}, {})};
  return out;
}

// Every choice of `f`'s name attributes (its reducer attribute's too) and two values of each
// float attribute: the attribute maps and reducers the identity is proved for.
std::vector<std::pair<sem::AttrMap, std::string>> choices(const sem::InstrSpec& f) {
  std::vector<std::pair<sem::AttrMap, std::string>> out = {{{}, f.reduce_op}};
  for (const auto& a : f.op.attrs) {
    std::vector<sem::AttrValue> values;
    if (a.type == sem::AttrType::Name)
      for (const auto& c : a.choices) values.emplace_back(c);
    else if (a.type == sem::AttrType::Float)
      values = {a.default_value.value_or(1.0), sem::AttrValue(0.5)};
    else
      continue;
    std::vector<std::pair<sem::AttrMap, std::string>> next;
    for (const auto& [m, r] : out)
      for (const auto& v : values) {
        if (a.name == f.reduce_attr) {
          next.push_back({m, std::get<std::string>(v)});
          continue;
        }
        sem::AttrMap m2 = m;
        m2[a.name] = v;
        next.push_back({m2, r});
      }
    out = std::move(next);
  }
  return out;
}

class Identity : public ::testing::TestWithParam<const char*> {};

TEST_P(Identity, ProvedForEveryChoice) {
  const target::Target& t = target_of(GetParam());
  int proved = 0;
  for (const auto& name : t.isa.names()) {
    const sem::InstrSpec& f = *t.isa.find(name);
    if (f.elementwise.empty()) continue;
    const sem::InstrSpec& a = *t.isa.find(f.elementwise);
    verify::VerdictCache cache;
    for (const auto& [attrs, reducer] : choices(f)) {
      ProofPair k = proof_pair(f, a, attrs, reducer);
      verify::Verdict v = verify::prove_equivalent(k.fused, k.split, {}, &cache);
      EXPECT_TRUE(v.proved()) << name << " " << reducer << ": " << verify::verdict_name(v.kind)
                              << " " << v.reason;
      proved += v.proved();
    }
  }
  EXPECT_GE(proved, 20);  // activation_reduce's functions, tensor_scalar_reduce's ops x reducers
}

INSTANTIATE_TEST_SUITE_P(Targets, Identity, ::testing::Values("trn1", "trn2", "trn3"));

// A false key (activation_reduce claiming a max of its element-wise result) loads, and the proof
// refuses it: the test above fails on such data.
TEST(Identity, FalseKeyRefused) {
  const target::Target& t = target_of("trn2");
  sem::InstrSpec f = *t.isa.find("activation_reduce");
  f.reduce_op = "max";
  const sem::InstrSpec& a = *t.isa.find("activation");
  ProofPair k = proof_pair(f, a, {{"func", std::string("exp")}, {"scale", 1.0}}, "max");
  EXPECT_FALSE(verify::prove_equivalent(k.fused, k.split).proved());
}

// The loader's checks on the key: message per mistake.
struct KeyCase {
  const char* name;
  const char* key;
  const char* error;  // a part of the message; "" = loads
};

class Key : public ::testing::TestWithParam<KeyCase> {};

TEST_P(Key, Checked) {
  const KeyCase& c = GetParam();
  std::string text = fmt::format(R"isa([instr.act]
doc = "a"
operands = ["x", "bias"]
attrs = [{{ name = "func", type = "func" }}]
funcs = ["copy", "exp"]
shape = {{ x = "[p, f]", bias = "[p, 1]" }}
out = "[p, f]"
expr = "apply(func, x + bias[p, 0])"
engines = ["scalar"]
cost = "N"
[instr.other]
doc = "b"
operands = ["x"]
shape = {{ x = "[p, f]" }}
out = "[p, f]"
expr = "x"
engines = ["scalar"]
cost = "N"
[instr.act_reduce]
doc = "c"
operands = ["x", "bias"]
attrs = [{{ name = "func", type = "func" }}, {{ name = "r", type = "reduceop" }}]
funcs = ["copy", "exp"]
reduceops = ["add", "max"]
shape = {{ x = "[p, f]", bias = "[p, 1]" }}
out = "[p, 1]"
contract = ["f"]
expr = "reduce(r, f, apply(func, x + bias[p, 0]))"
engines = ["scalar"]
cost = "N"
elementwise = {}
)isa",
                                 c.key);
  sem::InstrTable table;
  auto load = [&] { table.load(text, "isa.toml", sem::OpTable::builtin()); };
  if (std::string(c.error).empty()) {
    EXPECT_NO_THROW(load());
    return;
  }
  try {
    load();
    ADD_FAILURE() << "loaded";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(c.error), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Loader, Key,
    ::testing::Values(KeyCase{"ok", R"({ instr = "act", reduce_attr = "r" })", ""},
                      // a fixed reducer leaves `r` an attribute the element-wise one lacks
                      KeyCase{"extra_attr", R"({ instr = "act", reduce_op = "add" })",
                              "attribute 'r' is not one of 'act'"},
                      KeyCase{"unknown_instr", R"({ instr = "actt", reduce_op = "add" })",
                              "elementwise names 'actt', which is not another instruction"},
                      KeyCase{"other_operands", R"({ instr = "other", reduce_op = "add" })",
                              "its operands differ from those of 'other'"},
                      KeyCase{"both", R"({ instr = "act", reduce_op = "add", reduce_attr = "r" })",
                              "exactly one of reduce_op"},
                      KeyCase{"bad_reducer", R"({ instr = "act", reduce_op = "sub" })",
                              "elementwise.reduce_op 'sub' is not a reducer"},
                      KeyCase{"bad_attr", R"({ instr = "act", reduce_attr = "func" })",
                              "'copy' in the choices of 'func' is not a reducer"},
                      KeyCase{"typo", R"({ instr = "act", reduce_ops = "add" })",
                              "unknown key 'elementwise.reduce_ops'"}),
    [](const auto& info) { return std::string(info.param.name); });

// ---- the pass on small programs ----

// load x; e = A(x, ..); s = R(e) (reduces with `reducer`); stores of e and s. `between` adds an
// instruction between A and R.
enum class Between { None, WritesBias, ReadsSum, WritesSumElsewhere, ReadsE, LoopWritesX };
struct PassCase {
  const char* name;
  const char* a;  // activation | tensor_scalar
  sem::Engine a_engine;
  const char* r;  // activation_reduce | tensor_reduce
  sem::Reducer reducer;
  Between between;
  bool window;        // R reads the first half of e only
  int lag;            // R reads e at this lag
  bool op1;           // A's tensor_scalar has a second op (mul 2)
  const char* fused;  // "": none
};

class Pass : public ::testing::TestWithParam<PassCase> {};

Program pass_program(const target::Target& t, const PassCase& c) {
  sim::test::ProgramBuilder b(t);
  int x = b.hbm("x", ir::DType::F32, {256, 512});
  int out = b.hbm("out", ir::DType::F32, {256, 512});
  int sums = b.hbm("sums", ir::DType::F32, {256, 1});
  int xt = b.sbuf("x_t", ir::DType::F32, {128, 512}, 2);
  int bias = b.sbuf("bias", ir::DType::F32, {128, 1});
  int et = b.sbuf("e", ir::DType::F32, {128, 512}, 2);
  int st = b.sbuf("s", ir::DType::F32, {128, 1}, 2);
  int other = b.sbuf("o", ir::DType::F32, {128, 1}, 2);
  int i = b.loop(0, 2);
  b.load(i, xt, x, i);
  int a = b.op(i, c.a, c.a_engine, {xt, bias}, et);
  if (std::string(c.a) == "activation") {
    b.p.insts[a].attrs = {{"func", std::string("exp")}, {"scale", 1.0}};
  } else {
    b.p.insts[a].attrs = {{"op0", std::string("mul")}};
    if (c.op1) b.p.insts[a].attrs["op1"] = std::string("mul"), b.p.insts[a].attrs["operand1"] = 2.0;
  }
  switch (c.between) {
    case Between::None:
      break;
    case Between::WritesBias:
      b.op(i, "tensor_reduce", sem::Engine::Vector, {xt}, bias);
      break;
    case Between::ReadsSum:
      b.op(i, "tensor_copy", sem::Engine::Vector, {st}, other);
      break;
    case Between::WritesSumElsewhere:
      b.op(i, "tensor_reduce", sem::Engine::Vector, {xt}, st);
      break;
    case Between::ReadsE:
      b.op(i, "tensor_reduce", sem::Engine::Vector, {et}, other);
      break;
    case Between::LoopWritesX: {
      int l = b.loop(i, 1, "j");
      b.load(l, xt, x, i);
      break;
    }
  }
  int zero = b.sbuf("zero", ir::DType::F32, {128, 1});
  int r = std::string(c.r) == "activation_reduce"
              ? b.op(i, c.r, sem::Engine::Scalar, {et, zero}, st)
              : b.op(i, c.r, sem::Engine::Vector, {et}, st);
  Inst& ri = b.p.insts[r];
  ri.attrs =
      std::string(c.r) == "activation_reduce"
          ? sem::AttrMap{{"func", std::string("copy")}, {"scale", 1.0}}
          : sem::AttrMap{{"op", std::string(c.reducer == sem::Reducer::Max ? "max" : "add")}};
  ri.reduces = c.reducer;
  if (c.window) ri.in_window = {Window{{}, 256, 0, 1, 1}, Window{}};
  if (c.lag) ri.in_lag = {c.lag};
  b.store(i, et, out, i);
  b.store(i, st, sums, i);
  return b.p;
}

TEST_P(Pass, Rides) {
  const PassCase& c = GetParam();
  const target::Target& t = target_of("trn2");
  Program p = pass_program(t, c);
  fuse_reductions(p, t);
  int rider = -1;
  for (std::size_t i = 0; i < p.insts.size(); ++i)
    if (p.insts[i].rides >= 0) rider = static_cast<int>(i);
  if (std::string(c.fused).empty()) {
    EXPECT_EQ(rider, -1);
    return;
  }
  ASSERT_GE(rider, 0);
  EXPECT_EQ(p.insts[rider].fused->op.name, c.fused);
  EXPECT_EQ(p.insts[p.insts[rider].rides].spec->op.name, c.a);
  Inst f = fused_instruction(p, rider);
  EXPECT_EQ(f.out, p.insts[rider].out);
  EXPECT_EQ(f.engine, c.a_engine);
  validate(p);
  fuse_reductions(p, t);  // idempotent
  EXPECT_EQ(riders(p), 1);
}

constexpr auto kS = sem::Engine::Scalar;
constexpr auto kV = sem::Engine::Vector;
constexpr auto kG = sem::Engine::GpSimd;
constexpr auto kSum = sem::Reducer::Sum;
constexpr auto kMax = sem::Reducer::Max;

INSTANTIATE_TEST_SUITE_P(
    Programs, Pass,
    ::testing::Values(PassCase{"exp_then_sum", "activation", kS, "activation_reduce", kSum,
                               Between::None, false, 0, false, "activation_reduce"},
                      PassCase{"exp_then_vector_sum", "activation", kS, "tensor_reduce", kSum,
                               Between::None, false, 0, false, "activation_reduce"},
                      PassCase{"exp_then_max", "activation", kS, "tensor_reduce", kMax,
                               Between::None, false, 0, false, ""},
                      PassCase{"reader_of_e_between", "activation", kS, "activation_reduce", kSum,
                               Between::ReadsE, false, 0, false, "activation_reduce"},
                      PassCase{"bias_written_between", "activation", kS, "activation_reduce", kSum,
                               Between::WritesBias, false, 0, false, ""},
                      PassCase{"sum_read_between", "activation", kS, "activation_reduce", kSum,
                               Between::ReadsSum, false, 0, false, ""},
                      PassCase{"sum_written_between", "activation", kS, "activation_reduce", kSum,
                               Between::WritesSumElsewhere, false, 0, false, ""},
                      PassCase{"loop_writes_x_between", "activation", kS, "activation_reduce", kSum,
                               Between::LoopWritesX, false, 0, false, ""},
                      PassCase{"half_window", "activation", kS, "activation_reduce", kSum,
                               Between::None, true, 0, false, ""},
                      PassCase{"previous_copy", "activation", kS, "activation_reduce", kSum,
                               Between::None, false, 1, false, ""},
                      PassCase{"scaled_then_max", "tensor_scalar", kV, "tensor_reduce", kMax,
                               Between::None, false, 0, false, "tensor_scalar_reduce"},
                      PassCase{"second_op", "tensor_scalar", kV, "tensor_reduce", kMax,
                               Between::None, false, 0, true, ""},
                      PassCase{"on_gpsimd", "tensor_scalar", kG, "tensor_reduce", kSum,
                               Between::None, false, 0, false, ""}),
    [](const auto& info) { return std::string(info.param.name); });

// No reducer known (a hand-made program, or a lowering that is not the reduction alone): nothing
// rides.
TEST(Pass, UnknownReductionStays) {
  const target::Target& t = target_of("trn2");
  Program p = pass_program(
      t, {"x", "activation", kS, "activation_reduce", kSum, Between::None, false, 0, false, ""});
  for (Inst& in : p.insts) in.reduces.reset();
  fuse_reductions(p, t);
  EXPECT_EQ(riders(p), 0);
}

// The timeline charges the rider the fused instruction's cost less the activation's (MIN_II on
// the Scalar engine), on the Scalar engine, and counts one instruction for the two.
TEST(Pass, TimelineChargesTheTail) {
  const target::Target& t = target_of("trn2");
  Program p = pass_program(
      t, {"x", "activation", kS, "activation_reduce", kSum, Between::None, false, 0, false, ""});
  sim::SimResult alone = sim::simulate(p, t);
  fuse_reductions(p, t);
  ASSERT_EQ(riders(p), 1);
  sim::SimResult fused = sim::simulate(p, t);
  const double clock = t.engines.at(sem::Engine::Scalar).clock_hz;
  const double tail_ns = t.overheads.min_ii_cycles / clock * 1e9;
  const double pass_ns =
      (512 + t.overheads.min_ii_cycles) / clock * 1e9;  // max(MIN_II, f) + MIN_II
  EXPECT_NEAR(alone.busy(kS) - fused.busy(kS), 2 * (pass_ns - tail_ns), 1e-6);
  EXPECT_EQ(alone.instructions - fused.instructions, 2);
  EXPECT_LT(fused.latency_ns, alone.latency_ns);
}

}  // namespace
}  // namespace ts::lower

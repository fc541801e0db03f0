// Legality as data (isa.toml [legality], target/legality.h): the rules themselves, table-driven,
// and every instruction of sampled candidates of the 34 suite kernels (jobs/axon-suite.toml and
// jobs/nkibench.toml, original variant, first shape) on trn1, trn2 and trn3 checked against them,
// each candidate's simulated latency no lower than its attainable bound. All kernels: `slow`;
// a few in the default suite (lower.legality_quick).
#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/lower/legal_engine.h"
#include "tilesweep/lower/unsupported.h"
#include "tilesweep/sim/roofline.h"
#include "tilesweep/sim/simulate.h"
#include "tilesweep/sweep/job.h"

namespace ts {
namespace {

using sem::Engine;
using sem::Memory;

struct RuleCase {
  const char* target;
  const char* instr;
  Engine engine;
  std::vector<Memory> operands;
  Memory out;
  sem::AttrMap attrs;
  target::Rule want;
};

TEST(Legality, RulesOfTheTargets) {
  const RuleCase cases[] = {
      // "GpSimd Engine cannot access PSUM" (S1), reading or writing.
      {"trn1",
       "tensor_copy",
       Engine::GpSimd,
       {Memory::Psum},
       Memory::Sbuf,
       {},
       target::Rule::Memory},
      {"trn2",
       "tensor_copy",
       Engine::GpSimd,
       {Memory::Sbuf},
       Memory::Psum,
       {},
       target::Rule::Memory},
      {"trn2", "tensor_copy", Engine::GpSimd, {Memory::Sbuf}, Memory::Sbuf, {}, target::Rule::None},
      {"trn2", "tensor_copy", Engine::Vector, {Memory::Psum}, Memory::Sbuf, {}, target::Rule::None},
      {"trn3",
       "activation",
       Engine::GpSimd,
       {Memory::Psum, Memory::Sbuf},
       Memory::Sbuf,
       {{"func", std::string("exp")}},
       target::Rule::Memory},
      // The ALU operator table (S2): GpSimd runs add and multiply; nothing divides.
      {"trn1",
       "tensor_scalar",
       Engine::GpSimd,
       {Memory::Sbuf, Memory::Sbuf},
       Memory::Sbuf,
       {{"op0", std::string("sub")}},
       target::Rule::Operator},
      {"trn1",
       "tensor_scalar",
       Engine::GpSimd,
       {Memory::Sbuf, Memory::Sbuf},
       Memory::Sbuf,
       {{"op0", std::string("mul")}},
       target::Rule::None},
      {"trn2",
       "tensor_scalar",
       Engine::GpSimd,
       {Memory::Sbuf, Memory::Sbuf},
       Memory::Sbuf,
       {{"op0", std::string("mul")}, {"op1", std::string("maximum")}},
       target::Rule::Operator},
      {"trn2",
       "tensor_scalar",
       Engine::Vector,
       {Memory::Sbuf, Memory::Sbuf},
       Memory::Sbuf,
       {{"op0", std::string("sub")}},
       target::Rule::None},
      {"trn2",
       "tensor_tensor",
       Engine::Vector,
       {Memory::Sbuf, Memory::Sbuf},
       Memory::Sbuf,
       {{"op", std::string("div")}},
       target::Rule::Operator},
      {"trn3",
       "tensor_scalar_reduce",
       Engine::Vector,
       {Memory::Sbuf, Memory::Sbuf},
       Memory::Sbuf,
       {{"op0", std::string("div")}, {"reduce_op", std::string("add")}},
       target::Rule::Operator},
      // trn2's Scalar engine: (mul, add), (mul), (add), never (add, add).
      {"trn2",
       "tensor_scalar_act",
       Engine::Scalar,
       {Memory::Sbuf, Memory::Sbuf},
       Memory::Sbuf,
       {{"op0", std::string("add")}, {"operand1", 2.0}},
       target::Rule::Requirement},
      {"trn2",
       "tensor_scalar_act",
       Engine::Scalar,
       {Memory::Sbuf, Memory::Sbuf},
       Memory::Sbuf,
       {{"op0", std::string("add")}},
       target::Rule::None},
      {"trn2",
       "tensor_scalar_act",
       Engine::Scalar,
       {Memory::Psum, Memory::Sbuf},
       Memory::Sbuf,
       {{"op0", std::string("mul")}, {"operand1", 2.0}},
       target::Rule::None},
      {"trn3",
       "tensor_scalar_act",
       Engine::Scalar,
       {Memory::Sbuf, Memory::Sbuf},
       Memory::Sbuf,
       {{"op0", std::string("add")}, {"operand1", -1.0}},
       target::Rule::Requirement},
  };
  for (const auto& c : cases) {
    const target::Target& t = target::builtin_target(c.target);
    const sem::InstrSpec* in = t.isa.find(c.instr);
    ASSERT_NE(in, nullptr) << c.target << " " << c.instr;
    target::Breach b =
        target::check_instruction(t.legality, *in, c.engine, c.operands, &c.out, c.attrs);
    EXPECT_EQ(target::rule_name(b.rule), std::string(target::rule_name(c.want)))
        << c.target << " " << c.instr << ": " << b.why;
    EXPECT_EQ(b.why.empty(), c.want == target::Rule::None) << b.why;
  }
}

// No instruction of any target offers a divide: it is absent from the documented operator table.
TEST(Legality, NoInstructionDivides) {
  for (const auto& name : target::builtin_target_names()) {
    const target::Target& t = target::builtin_target(name);
    for (const auto& i : t.isa.names())
      for (const auto& a : t.isa.find(i)->op.attrs)
        EXPECT_EQ(std::count(a.choices.begin(), a.choices.end(), "div"), 0)
            << name << " " << i << "." << a.name;
  }
}

struct BadRules {
  const char* text;
  const char* message;
};

// The rules resolved per instruction and engine at load (what candidates are checked with)
// say what the rules as written say, for every instruction of every target on every engine,
// operand and result memories, and every ALU operator choice plus one no instruction offers;
// keeps_rules (the answer without the message, for engine trials) says the same both ways.
TEST(Legality, ResolvedRulesAgreeWithTheRulesAsWritten) {
  const Engine engines[] = {Engine::Tensor, Engine::Vector, Engine::Scalar, Engine::GpSimd,
                            Engine::Dma};
  const Memory memories[] = {Memory::Sbuf, Memory::Psum, Memory::Hbm};
  int checked = 0, breaches = 0;
  for (const auto& name : target::builtin_target_names()) {
    const target::Target& t = target::builtin_target(name);
    target::Legality as_written = t.legality;
    as_written.resolved.clear();
    for (const auto& i : t.isa.names()) {
      const sem::InstrSpec& in = *t.isa.find(i);
      ASSERT_NE(target::resolved_rules(t.legality, in, Engine::Vector), nullptr)
          << name << " " << i;
      std::vector<sem::AttrMap> attr_sets = {{}};
      for (const auto& a : in.op.attrs)
        if (std::count(t.legality.alu_attributes.begin(), t.legality.alu_attributes.end(), a.name) >
            0) {
          for (const auto& c : a.choices) attr_sets.push_back({{a.name, c}});
          attr_sets.push_back({{a.name, std::string("divide")}});
        }
      for (Engine e : engines)
        for (Memory operand : memories)
          for (Memory out : memories)
            for (const auto& attrs : attr_sets) {
              std::vector<Memory> operands(in.op.operands.size(), operand);
              target::Breach fast =
                  target::check_instruction(t.legality, in, e, operands, &out, attrs);
              target::Breach slow =
                  target::check_instruction(as_written, in, e, operands, &out, attrs);
              EXPECT_EQ(target::rule_name(fast.rule), std::string(target::rule_name(slow.rule)))
                  << name << " " << i << " on " << sem::engine_name(e) << ": " << slow.why;
              EXPECT_EQ(fast.why, slow.why);
              // The answer without the message (engine trials), both ways.
              EXPECT_EQ(target::keeps_rules(t.legality, in, e, operands, &out, attrs), !slow)
                  << name << " " << i << " on " << sem::engine_name(e);
              EXPECT_EQ(target::keeps_rules(as_written, in, e, operands, &out, attrs), !slow);
              ++checked;
              breaches += slow ? 1 : 0;
            }
    }
  }
  EXPECT_GT(checked, 1000);
  EXPECT_GT(breaches, 100);  // the table exercises both answers
}

TEST(Legality, MalformedRulesNameTheFileAndLine) {
  const BadRules cases[] = {
      {"[legality.engine.gpsimd]\nmemory = [\"sbuf\"]\n",
       "isa.toml:1:1: error: 'legality.engine.gpsimd' needs a source"},
      {"[legality.engine.pool]\nmemory = [\"sbuf\"]\nsource = \"S1\"\n",
       "isa.toml:1:1: error: unknown engine 'pool'"},
      {"[legality.engine.gpsimd]\nmemory = [\"dram\"]\nsource = \"S1\"\n",
       "isa.toml:1:1: error: unknown memory 'dram'"},
      {"[legality]\nengines = 1\n",
       "isa.toml:2:1: error: unknown key 'engines' in [legality]; did you mean 'engine'?"},
      {"[legality.engine.gpsimd]\nmemory = [\"sbuf\"]\nalus = [\"add\"]\nsource = \"S1\"\n",
       "isa.toml:3:1: error: unknown key 'alus' in [legality.engine.gpsimd]; did you mean 'alu'?"},
      {"[legality.engine.gpsimd]\nmemories = [\"sbuf\"]\nsource = \"S1\"\n",
       "isa.toml:2:1: error: unknown key 'memories' in [legality.engine.gpsimd] (its keys: memory, "
       "alu, source)"},
      {"[[legality.require]]\ninstr = \"x\"\nengine = \"scalar\"\nrequires = { a = 1 }\n",
       "isa.toml:4:1: error: unknown key 'requires' in [[legality.require]]; did you mean "
       "'require'?"},
      {"[[legality.require]]\ninstr = \"x\"\nengine = \"scalar\"\nsource = \"S1\"\n",
       "isa.toml:1:1: error: a 'legality.require' row needs a 'require' table"},
  };
  for (const auto& c : cases) {
    try {
      target::parse_legality(c.text, "isa.toml");
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
}

// ---- the suite ----

struct SuiteKernel {
  std::string target;
  sweep::JobKernel kernel;
};

std::vector<SuiteKernel> suite() {
  std::vector<SuiteKernel> out;
  std::vector<sweep::JobKernel> kernels;
  for (const char* job : {"axon-suite.toml", "nkibench.toml"}) {
    auto j = sweep::load_job(std::string(TS_SOURCE_DIR) + "/jobs/" + job, sweep::OutputCheck::Skip);
    kernels.insert(kernels.end(), j.kernels.begin(), j.kernels.end());
  }
  for (const auto& t : target::builtin_target_names())
    for (const auto& k : kernels) out.push_back({t, k});
  return out;
}

lower::SynthesisCache& cache_of(const std::string& target) {
  static std::mutex mu;
  static std::map<std::string, lower::SynthesisCache> caches;
  std::lock_guard<std::mutex> lock(mu);
  return caches[target];
}

class SuiteLegality : public ::testing::TestWithParam<SuiteKernel> {};

TEST_P(SuiteLegality, SampledCandidatesKeepTheRulesAndTheAttainableBound) {
  const auto& [target, jk] = GetParam();
  const target::Target& t = target::builtin_target(target);
  ir::Module m = ir::load_module(jk.file, sem::OpTable::builtin());
  const ir::Kernel& k = m.kernel(jk.name);
  sem::DimEnv dims = sweep::shape_env(jk.shapes.front());
  lower::KernelChoices choices = lower::instruction_choices(k, t.isa, cache_of(target));
  lower::CandidateSpace space({{&k, &choices}}, t, dims);
  sim::Roofline bound = sim::roofline(k, dims, t);
  constexpr std::int64_t kSamples = 8;
  int built = 0;
  for (std::int64_t i = 0; i < space.size();
       i += std::max<std::int64_t>(1, space.size() / kSamples)) {
    lower::Lowered<lower::Program> program = space.materialize(i);
    if (!program) continue;
    const lower::Program& p = *program;
    ++built;
    for (const auto& b : lower::legality_breaches(p, t.legality))
      ADD_FAILURE() << "candidate " << i << " instruction " << b.inst << ": " << b.breach.why;
    sim::SimResult r = sim::simulate(p, t);
    if (r.feasible) {
      EXPECT_GE(r.latency_ns, bound.attainable_ns * (1 - 1e-9)) << "candidate " << i;
    }
  }
  EXPECT_GT(built, 0) << "no candidate builds";
}

INSTANTIATE_TEST_SUITE_P(Suites, SuiteLegality, ::testing::ValuesIn(suite()), [](const auto& info) {
  // target_suite_kernel, e.g. trn1_axon_matmul (the suite: the kernel file's folder)
  std::string file = info.param.kernel.file;
  std::string folder = file.substr(0, file.find_last_of('/'));
  folder = folder.substr(folder.find_last_of('/') + 1);
  std::string name = info.param.target + "_" + folder + "_" + info.param.kernel.label;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
});

// relu at 16384 x 16384 on trn2, every candidate: at most the attainable bound's speed (it
// simulated at 101.4% of the roofline when the roofline used 362.5 GB/s per core).
TEST(Legality, LargeReluNeverBeatsTheAttainableBound) {
  const target::Target& t = target::builtin_target("trn2");
  ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/axon/relu.py",
                                 sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  sem::DimEnv dims{{"M", 16384}, {"N", 16384}};
  lower::KernelChoices choices = lower::instruction_choices(k, t.isa, cache_of("trn2"));
  lower::CandidateSpace space({{&k, &choices}}, t, dims);
  sim::Roofline bound = sim::roofline(k, dims, t);
  int simulated = 0;
  double best = 1e300;
  for (std::int64_t i = 0; i < space.size(); ++i) {
    lower::Lowered<lower::Program> program = space.materialize(i);
    if (!program) continue;
    const lower::Program& p = *program;
    sim::SimResult r = sim::simulate(p, t);
    if (!r.feasible) continue;
    ++simulated;
    best = std::min(best, r.latency_ns);
    EXPECT_GE(r.latency_ns, bound.attainable_ns) << "candidate " << i;
  }
  EXPECT_GT(simulated, 50);
  EXPECT_LE(best, 1.01 * bound.attainable_ns);  // the DMA ceiling is reached: the bound is tight
  EXPECT_GT(best, bound.bound_ns);              // AccelOpt's 640 GB/s is not
}

}  // namespace
}  // namespace ts

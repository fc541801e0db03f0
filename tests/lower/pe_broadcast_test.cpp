// Partition broadcasts on the PE (pe_broadcast.cpp, GroupTiling::pe_broadcast): the matmul of a
// ones stationary [1, P] and a row [1, F] proved equal to the row broadcast across P partitions
// by Z3 over unbounded P and F, on every bundled target's nc_matmul (and a stationary of twos
// refused); where the twins (and psum-partials, carried_reduction.cpp) are offered; and their
// candidates on numbers against the reference.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "reference_check.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/graph_edit.h"
#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/sim/execute.h"
#include "tilesweep/sweep/check.h"
#include "tilesweep/verify/prove.h"

namespace ts::lower {
namespace {

ir::Module parse(const std::string& src) {
  return ir::parse_module(src, "t.py", sem::OpTable::builtin());
}

// `whole`'s parameters, then nc_matmul(broadcast_to(value, shape=(1, P)), x): the target's
// instruction at K = 1 with a constant stationary.
ir::Kernel matmul_form(const ir::Kernel& whole, const target::Target& t, double value) {
  ir::Kernel k = whole;
  k.nodes.resize(k.params.size());
  k.outputs.clear();
  k.name = "pe";
  const sem::OpTable& ops = sem::OpTable::builtin();
  int c = ir::add_op(k, *ops.find("const"), {}, {{"value", value}}, {});
  k.nodes[static_cast<std::size_t>(c)].weak = true;
  std::vector<sem::Dim> shape = {sem::Dim(1), whole.params[1].shape[0]};
  int ones = ir::add_op(k, *ops.find("broadcast_to"), {c}, {{"shape", shape}}, {});
  int out = ir::add_op(k, t.isa.find("nc_matmul")->op, {ones, 0}, {}, {});
  k.outputs = {out};
  return k;
}

struct ProofCase {
  const char* target;
  double value;
  bool proved;
};

class MatmulBroadcast : public ::testing::TestWithParam<ProofCase> {};

TEST_P(MatmulBroadcast, IsProvedOverUnboundedDims) {
  const ProofCase& c = GetParam();
  static ir::Module m = parse(
      "def whole(x: f32[1, F], z: f32[P, F]) -> f32[P, F]:\n"
      "    return broadcast_to(x, (P, F))\n");
  const ir::Kernel& whole = m.kernel("whole");
  verify::Verdict v = verify::prove_equivalent(
      whole, matmul_form(whole, target::builtin_target(c.target), c.value));
  if (c.proved)
    EXPECT_TRUE(v.proved()) << verify::verdict_name(v.kind) << " " << v.reason;
  else
    EXPECT_EQ(v.kind, verify::VerdictKind::NotEquivalent) << verify::verdict_name(v.kind);
}

INSTANTIATE_TEST_SUITE_P(
    Targets, MatmulBroadcast,
    ::testing::Values(ProofCase{"trn1", 1.0, true}, ProofCase{"trn2", 1.0, true},
                      ProofCase{"trn3", 1.0, true}, ProofCase{"trn1", 2.0, false}),
    [](const auto& info) {
      return std::string(info.param.target) + (info.param.proved ? "_ones" : "_twos");
    });

struct NumbersCase {
  std::string name;
  std::string source;  // a kernel's text, or an NKIBench kernel's name (empty: mamba)
  sem::DimEnv dims;
  bool offered;   // some candidate broadcasts on the PE
  bool partials;  // some candidate writes a batch reduction's partials to PSUM
  bool values;    // some candidate moves a value to PSUM (psum-values)
};

void PrintTo(const NumbersCase& c, std::ostream* os) { *os << c.name; }

class PeBroadcasts : public ::testing::TestWithParam<NumbersCase> {};

// Sampled candidates run by the functional ISA interpreter against the reference; those that
// broadcast on the PE say so in their description, and hold the broadcast tile in PSUM; those
// with psum-partials write a Vector result to PSUM; those with psum-values read no two inputs
// of one Vector instruction from PSUM, and some read one input from each memory.
TEST_P(PeBroadcasts, MatchTheReference) {
  const NumbersCase& nc = GetParam();
  ir::Module m = nc.source.find("def ") == std::string::npos
                     ? ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/nkibench/" +
                                           (nc.source.empty() ? "mamba" : nc.source) + ".py",
                                       sem::OpTable::builtin())
                     : parse(nc.source);
  const ir::Kernel& k = m.kernels.front();
  const target::Target& t = target::builtin_target("trn1");
  test::Prepared p(k, t, 10);
  SpaceOptions so;
  so.max_block = 2;
  CandidateSpace space(p.pk.space_variants(), t, nc.dims, so);
  ASSERT_GT(space.size(), 0);
  auto inputs = sweep::check_inputs(k, nc.dims, 7);
  auto ref = ir::evaluate(k, nc.dims, inputs, ir::Precision::F64);
  int broadcast = 0, partials = 0, values = 0, values_mixed = 0, checked = 0;
  for (std::int64_t i = 0; i < space.size(); i += std::max<std::int64_t>(1, space.size() / 2000)) {
    bool pe = space.describe(i).find(" pe-broadcast") != std::string::npos;
    bool psum = space.describe(i).find(" psum-partials") != std::string::npos;
    bool moved = space.describe(i).find(" psum-values") != std::string::npos;
    if ((pe && broadcast >= 12) || (psum && partials >= 12) ||
        (moved && values >= 12 && values_mixed > 0) ||
        (!pe && !psum && !moved && checked - broadcast - partials - values >= 12))
      continue;
    Lowered<Program> program = space.materialize(i);
    if (!program) continue;
    ASSERT_TRUE(test::matches(sim::execute(*program, inputs), ref)) << space.describe(i);
    ++checked;
    if (moved) {
      // Some Vector instruction reads one input in PSUM and the other in SBUF; none reads two.
      ++values;
      int mixed = 0;
      for (const Inst& in : program->insts) {
        if (in.engine != sem::Engine::Vector || in.in.size() != 2) continue;
        int psum_inputs = 0;
        for (int b : in.in)
          psum_inputs += program->buffers[static_cast<std::size_t>(b)].memory == sem::Memory::Psum;
        mixed += psum_inputs == 1;
        EXPECT_LT(psum_inputs, 2) << space.describe(i);
      }
      // (Where the op picks an instruction without the faster case nothing moves: the program
      // is the tiling's own.)
      values_mixed += mixed > 0;
    }
    if (psum) {
      ++partials;
      bool written = std::any_of(program->insts.begin(), program->insts.end(), [&](const Inst& in) {
        return in.engine == sem::Engine::Vector && in.out >= 0 &&
               program->buffers[static_cast<std::size_t>(in.out)].memory == sem::Memory::Psum;
      });
      EXPECT_TRUE(written) << space.describe(i);
      // With the row broadcast on the PE too, the partial takes the dead broadcast tile (same
      // shape, one row tile): no PSUM buffer of its own.
      if (pe && space.describe(i).find(" block=1 ") != std::string::npos) {
        std::set<int> broadcast_tiles;
        for (const Inst& in : program->insts)
          if (in.spec->op.name == "nc_matmul") broadcast_tiles.insert(in.out);
        for (const Inst& in : program->insts)
          if (in.engine == sem::Engine::Vector && in.out >= 0 &&
              program->buffers[static_cast<std::size_t>(in.out)].memory == sem::Memory::Psum)
            EXPECT_TRUE(broadcast_tiles.count(in.out)) << space.describe(i);
      }
    }
    if (!pe) continue;
    ++broadcast;
    bool in_psum = std::any_of(program->insts.begin(), program->insts.end(), [&](const Inst& in) {
      return in.spec->op.name == "nc_matmul" && in.out >= 0 &&
             program->buffers[static_cast<std::size_t>(in.out)].memory == sem::Memory::Psum &&
             program->buffers[static_cast<std::size_t>(in.in[0])].constant;
    });
    EXPECT_TRUE(in_psum) << space.describe(i);
  }
  EXPECT_GT(checked, 0);
  EXPECT_EQ(partials > 0, nc.partials) << partials << " psum-partials candidates";
  EXPECT_EQ(values_mixed > 0, nc.values) << values << " psum-values candidates, " << values_mixed
                                         << " reading one input from each memory";
  if (nc.offered)
    EXPECT_GT(broadcast, 0) << "no candidate of " << nc.name << " broadcasts on the PE";
  else
    EXPECT_EQ(broadcast, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, PeBroadcasts,
    ::testing::Values(NumbersCase{"row_times_rows",
                                  "def f(x: f32[M, N], b: f32[1, N]) -> f32[M, N]:\n"
                                  "    return x * b + x\n",
                                  {{"M", 256}, {"N", 1024}},
                                  true,
                                  false,
                                  true},
                      NumbersCase{"bf16_row",
                                  "def f(x: bf16[M, N], b: bf16[1, N]) -> bf16[M, N]:\n"
                                  "    return x * b\n",
                                  {{"M", 128}, {"N", 768}},
                                  true,
                                  false,
                                  false},
                      NumbersCase{"mamba", "", {{"C", 128}, {"M", 48}, {"S", 4}}, true, true, true},
                      NumbersCase{"sum_over_batch",
                                  "def f(x: f32[S, M, N], y: f32[S, M, N]) -> f32[M, N]:\n"
                                  "    return sum(x * y, axis=0)\n",
                                  {{"S", 4}, {"M", 256}, {"N", 512}},
                                  false,
                                  true,
                                  true},
                      NumbersCase{"adamw", "adamw", {{"M", 128}, {"N", 1024}}, false, false, true},
                      // rope's working picks read no PSUM faster (scalar_tensor_tensor): its
                      // twin is judged with the tensor_tensor lowerings of its sub and add.
                      NumbersCase{"rope", "rope", {{"D", 128}, {"L", 1024}}, false, false, true},
                      NumbersCase{"per_row_scalar",
                                  "def f(x: f32[M, N], s: f32[M, 1]) -> f32[M, N]:\n"
                                  "    return x * s\n",
                                  {{"M", 256}, {"N", 512}},
                                  false,
                                  false,
                                  false}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ts::lower

// The attainable bound's scarce-operations term (sim/attainable.h, sim/roofline.h): the rates it
// reads off isa.toml, the term it gives kernels with scans and functions, the kernels it leaves
// out (masks, slices), and its soundness: the best candidate of the whole space (every variant,
// fused and unfused, instruction fusion included) is never faster than the bound.
#include "tilesweep/sim/attainable.h"

#include <gtest/gtest.h>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/sim/roofline.h"
#include "tilesweep/sweep/prepare.h"
#include "tilesweep/sweep/score.h"

namespace ts {
namespace {

using sem::Engine;

ir::Kernel parse(const std::string& text) {
  return ir::parse_module(text, "attainable_test.py", sem::OpTable::builtin()).kernels.front();
}

ir::Kernel load(const std::string& file) {
  return ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/" + file,
                         sem::OpTable::builtin())
      .kernels.front();
}

// Per target, scarce operation and engine: results per second, from the instructions' formulas
// at their best tile (128 partitions; the scans max(MIN_II, 2N): half an element per cycle; the
// activations max(MIN_II, N): one) times the engine's clock. None elsewhere.
struct RateCase {
  const char* target;
  const char* op;
  Engine engine;
  double per_s;  // 0: this engine computes none of it
};

TEST(ScarceOperations, RatesComeFromTheIsa) {
  const RateCase cases[] = {
      {"trn1", "range product", Engine::Vector, 0.5 * 128 * 1.12e9},
      {"trn1", "range product", Engine::Scalar, 0},
      {"trn1", "range product", Engine::GpSimd, 0},
      {"trn1", "tanh", Engine::Scalar, 128 * 1.4e9},
      {"trn1", "sqrt", Engine::Scalar, 128 * 1.4e9},
      {"trn1", "sqrt", Engine::Vector, 0},
      {"trn2", "range product", Engine::Vector, 0.5 * 128 * 0.96e9},
      {"trn2", "sqrt", Engine::Scalar, 128 * 1.2e9},
      {"trn3", "range product", Engine::Vector, 0.5 * 128 * 1.2e9},
  };
  for (const auto& c : cases) {
    const sim::AttainablePeaks& p = sim::attainable_peaks(target::builtin_target(c.target));
    double rate = 0;
    if (auto op = p.scarce_per_s.find(c.op); op != p.scarce_per_s.end())
      if (auto e = op->second.find(c.engine); e != op->second.end()) rate = e->second;
    EXPECT_DOUBLE_EQ(rate, c.per_s) << c.target << " " << c.op << " " << engine_name(c.engine);
  }
  // exp and log are not scarce: the laws of exponents may merge or cancel them.
  for (const char* t : {"trn1", "trn2", "trn3"}) {
    const sim::AttainablePeaks& p = sim::attainable_peaks(target::builtin_target(t));
    EXPECT_EQ(p.scarce_per_s.count("exp"), 0u) << t;
    EXPECT_EQ(p.scarce_per_s.count("log"), 0u) << t;
  }
}

// What an expression counts: a scan's product once (scan_from writes two), a function per call,
// an applied function at the most any choice applies.
TEST(ScarceOperations, CountedFromTheExpression) {
  const sem::OpTable& ops = sem::OpTable::builtin();
  auto none = [](const std::string&) { return std::vector<const sem::OpSpec*>{}; };
  struct Case {
    const char* op;
    sim::ScarceOps want;
  };
  const Case cases[] = {
      {"scan", {{"range product", 1}}},
      {"scan_from", {{"range product", 1}}},
      {"gelu", {{"tanh", 1}}},
      {"rsqrt", {{"sqrt", 1}}},
      {"exp", {}},
      {"silu", {}},
      {"mul", {}},
  };
  for (const auto& c : cases)
    EXPECT_EQ(sim::scarce_operations(*ops.find(c.op)->expr, none), c.want) << c.op;
  const target::Target& t = target::builtin_target("trn1");
  const sem::InstrSpec& act = *t.isa.find("activation");
  auto choices = [&](const std::string& attr) {
    std::vector<const sem::OpSpec*> out;
    for (const auto& name : act.op.attr(attr)->choices) out.push_back(ops.find(name));
    return out;
  };
  sim::ScarceOps got = sim::scarce_operations(*act.op.expr, choices);
  EXPECT_EQ(got.at("sqrt"), 1);
  EXPECT_EQ(got.at("tanh"), 1);
  EXPECT_EQ(got.at("sin"), 1);
  EXPECT_EQ(got.count("range product"), 0u);
}

// The term per kernel: results needed over the rate of the engines that compute them; 0 where
// the kernel masks or slices.
struct TermCase {
  const char* name;
  std::string source;  // kernel text, or "file:" and a path under jobs/kernels
  sem::DimEnv dims;
  const char* target;
  double scarce_ns;
};

ir::Kernel kernel_of(const std::string& source) {
  return source.rfind("file:", 0) == 0 ? load(source.substr(5)) : parse(source);
}

TEST(ScarceOperations, TermOfAKernel) {
  const std::string scan =
      "def k(a: f32[M, N], b: f32[M, N]) -> f32[M, N]:\n    return scan(a, b, axis=1)\n";
  const std::string masked =
      "def k(a: f32[N, N], b: f32[N, N]) -> f32[N, N]:\n"
      "    return where(iota(N, axis=1) <= iota(N, axis=0), scan(a, b, axis=1), 0.0)\n";
  const std::string sliced =
      "def k(a: f32[M, N], b: f32[M, N]) -> f32[M, 8]:\n    return scan(a, b, axis=1)[:, :8]\n";
  const TermCase cases[] = {
      {"scan", scan, {{"M", 1024}, {"N", 4096}}, "trn1", 1024.0 * 4096 / (0.5 * 128 * 1.12)},
      {"scan trn2", scan, {{"M", 1024}, {"N", 4096}}, "trn2", 1024.0 * 4096 / (0.5 * 128 * 0.96)},
      // C x S x M scan elements on Vector: 409.6 us on trn1.
      {"mamba",
       "file:nkibench/mamba.py",
       {{"C", 256}, {"M", 7168}, {"S", 16}},
       "trn1",
       256.0 * 16 * 7168 / (0.5 * 128 * 1.12)},
      // sqrt of every element on Scalar.
      {"adamw",
       "file:nkibench/adamw.py",
       {{"M", 1024}, {"N", 2048}},
       "trn2",
       1024.0 * 2048 / 153.6},
      {"masked", masked, {{"N", 1024}}, "trn1", 0},
      {"sliced", sliced, {{"M", 1024}, {"N", 4096}}, "trn1", 0},
      {"relu", "file:axon/relu.py", {{"M", 1024}, {"N", 4096}}, "trn1", 0},
  };
  for (const auto& c : cases) {
    ir::Kernel k = kernel_of(c.source);
    sim::Roofline r = sim::roofline(k, c.dims, target::builtin_target(c.target));
    EXPECT_NEAR(r.attainable_scarce_ns, c.scarce_ns, 1e-9 * c.scarce_ns + 1e-9) << c.name;
    EXPECT_GE(r.attainable_other_ns, r.attainable_scarce_ns) << c.name;
    // Two cores halve it.
    sim::Roofline two = sim::roofline(k, c.dims, target::builtin_target(c.target), 2);
    EXPECT_NEAR(two.attainable_scarce_ns, c.scarce_ns / 2, 1e-9 * c.scarce_ns + 1e-9) << c.name;
  }
}

// Soundness: the best simulated candidate of the whole space (every proved variant, fused and
// unfused groups, instruction fusion, every engine policy) is no faster than the bound with the
// variants. Shapes where the scarce term is the largest.
struct SoundCase {
  const char* name;
  std::string source;
  sem::DimEnv dims;
};

class ScarceSoundness : public ::testing::TestWithParam<const char*> {};

TEST_P(ScarceSoundness, NoCandidateBeatsTheBound) {
  const std::string scan_mul =
      "def k(a: f32[M, N], b: f32[M, N], c: f32[M, N]) -> f32[M, N]:\n"
      "    return c * scan(a, b * c, axis=1)\n";
  const SoundCase cases[] = {
      {"mamba", "file:nkibench/mamba.py", {{"C", 128}, {"M", 1024}, {"S", 4}}},
      {"scan_mul", scan_mul, {{"M", 256}, {"N", 2048}}},
      {"adamw", "file:nkibench/adamw.py", {{"M", 256}, {"N", 2048}}},
  };
  const target::Target& t = target::builtin_target(GetParam());
  for (const auto& c : cases) {
    ir::Kernel k = kernel_of(c.source);
    const sem::DimEnv& dims = c.dims;
    lower::SynthesisCache cache;
    sweep::PreparedKernel pk = sweep::prepare_kernel(k, t.isa, cache);
    sim::Roofline bound = sim::roofline(k, dims, t, 1, pk.variant_kernels());
    ASSERT_GT(bound.attainable_scarce_ns, 0) << c.name;
    lower::CandidateSpace space(pk.space_variants(), t, dims);
    sweep::RangeResult r = sweep::score_range(space, 0, space.size(), t, 4);
    ASSERT_FALSE(r.top.empty()) << c.name;
    for (const auto& best : r.top)
      EXPECT_GE(best.sim.latency_ns, bound.attainable_ns * (1 - 1e-9))
          << c.name << ": " << space.describe(best.index);
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, ScarceSoundness, ::testing::Values("trn1", "trn2", "trn3"));

}  // namespace
}  // namespace ts

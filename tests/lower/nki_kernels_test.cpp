// NKI source of real candidates: for a few suite kernels, the first fused candidate of the
// original variant on trn2 at a small shape, emitted and compared with a golden file
// (TS_UPDATE_GOLDEN=1 rewrites them), and checked to be valid Python.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tilesweep/base/source.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/nki.h"
#include "tilesweep/lower/nki_shapes.h"
#include "tilesweep/sweep/prepare.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

struct Case {
  const char* file;
  sem::DimEnv dims;
  // With the instruction fusion on (the first such candidate): the golden is
  // kernel_<name>_fused_<api>.py, in both dialects.
  bool fusion = false;
  lower::NkiApi api = lower::NkiApi::Current;
};

std::string emit(const Case& c) {
  ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/" + c.file,
                                 sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  const target::Target& t = target::builtin_target("trn2");
  lower::SynthesisCache cache;
  sweep::PrepareOptions opts;
  opts.propagate.max_variants = 1;
  sweep::PreparedKernel pk = sweep::prepare_kernel(k, t.isa, cache, opts);
  lower::CandidateSpace space(pk.space_variants(), t, c.dims);
  std::int64_t index = 0;
  for (const auto& s : space.sections())
    if (s.variant == 0 && s.fused) index = s.first;
  while (c.fusion && !space.decode(index).instruction_fusion) ++index;
  lower::Program p = space.materialize(index).value();
  p.config = space.describe(index);
  return lower::emit_nki(p, lower::nki_params(k), c.api);
}

std::string golden_name(const Case& c) {
  std::string name = fs::path(c.file).stem().string();
  if (c.fusion) name += std::string("_fused_") + lower::nki_api_name(c.api);
  return name;
}

class NkiKernels : public ::testing::TestWithParam<Case> {};

TEST_P(NkiKernels, MatchGoldenAndCompile) {
  const Case& c = GetParam();
  std::string got = emit(c);
  std::string name = golden_name(c);
  fs::path golden =
      fs::path(TS_SOURCE_DIR) / "tests" / "lower" / "golden" / ("kernel_" + name + ".py");
  if (std::getenv("TS_UPDATE_GOLDEN")) std::ofstream(golden) << got;
  EXPECT_EQ(got, read_text_file(golden.string())) << "TS_UPDATE_GOLDEN=1 rewrites " << golden;
  fs::path tmp = fs::temp_directory_path() /
                 ("tilesweep_nki_" + name + "_" + std::to_string(::getpid()) + ".py");
  std::ofstream(tmp) << got;
  std::string cmd = "/usr/bin/python3 -m py_compile '" + tmp.string() + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  fs::remove(tmp);
}

// softmax fused: exp(x - max) as one activation whose bias is the [P, 1] value 0 - max.
INSTANTIATE_TEST_SUITE_P(
    Suite, NkiKernels,
    ::testing::Values(
        Case{"axon/rmsnorm_matmul.py", {{"M", 256}, {"K", 256}, {"N", 256}}},
        Case{"axon/silu_mlp.py", {{"M", 256}, {"K", 256}, {"N", 256}}},
        Case{"axon/softmax.py", {{"M", 256}, {"N", 512}}},
        Case{"axon/softmax.py", {{"M", 256}, {"N", 512}}, true, lower::NkiApi::Current},
        Case{"axon/softmax.py", {{"M", 256}, {"N", 512}}, true, lower::NkiApi::Legacy}),
    [](const auto& info) { return golden_name(info.param); });

// Generic kernels: the first fused candidate of the original variant, probed at twice each dim.
struct GenericCase {
  const char* file;
  sem::DimEnv dims;
  std::vector<std::string> generic;  // the dims it reads from its arguments
  std::vector<std::string> lines;    // lines the source has
};

class NkiGeneric : public ::testing::TestWithParam<GenericCase> {};

TEST_P(NkiGeneric, ReadsGenericDimsFromTheArguments) {
  const GenericCase& c = GetParam();
  ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/" + c.file,
                                 sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  const target::Target& t = target::builtin_target("trn2");
  lower::SynthesisCache cache;
  sweep::PrepareOptions opts;
  opts.propagate.max_variants = 1;
  sweep::PreparedKernel pk = sweep::prepare_kernel(k, t.isa, cache, opts);
  lower::CandidateSpace space(pk.space_variants(), t, c.dims);
  std::vector<lower::ProbeSpace> at;
  for (const auto& [dim, value] : c.dims) {
    sem::DimEnv d = c.dims;
    d[dim] = 2 * value;
    at.push_back({dim, 2 * value, lower::CandidateSpace(pk.space_variants(), t, d), ""});
  }
  std::int64_t index = 0;
  std::vector<std::string> fixed;
  std::vector<lower::ShapeProbe> probes = lower::shape_probes(space, index, at, &fixed);
  lower::Program p = space.materialize(index).value();
  std::vector<std::string> names;
  for (const auto& param : k.params) names.push_back(param.name);
  lower::NkiShapes shapes = lower::generic_shapes(p, c.dims, probes, names);
  EXPECT_EQ(shapes.generic, c.generic);
  std::string src = lower::emit_nki(p, lower::nki_params(k), lower::NkiApi::Current, &shapes);
  for (const auto& l : c.lines) EXPECT_NE(src.find(l), std::string::npos) << l << "\n" << src;
  // A probe whose program differs in more than sizes keeps its dim fixed, and says why.
  for (auto& probe : probes) probe.program.insts.pop_back();
  lower::NkiShapes none = lower::generic_shapes(p, c.dims, probes, names);
  EXPECT_TRUE(none.generic.empty());
  ASSERT_FALSE(none.fixed.empty());
  EXPECT_NE(none.fixed[0].find("at another size"), std::string::npos) << none.fixed[0];
}

INSTANTIATE_TEST_SUITE_P(
    Suite, NkiGeneric,
    ::testing::Values(GenericCase{"axon/softmax.py",
                                  {{"M", 256}, {"N", 512}},
                                  {"M"},
                                  {"M = x.shape[0]", "assert tuple(x.shape) == (M, 512)",
                                   "assert M % 128 == 0", "in range(M // 128):"}},
                      GenericCase{
                          "axon/rmsnorm_matmul.py",
                          {{"M", 256}, {"K", 256}, {"N", 384}},
                          {"M", "N"},
                          {"M = x.shape[0]", "N = w.shape[1]", "assert tuple(w.shape) == (256, N)",
                           "nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)"}}),
    [](const auto& info) { return fs::path(info.param.file).stem().string(); });

}  // namespace
}  // namespace ts

// Every benchmark kernel against an independent NumPy implementation: the fixtures in
// tests/golden/<suite>/<kernel>/ (made by scripts/make_golden.py) hold the inputs and float64
// outputs; the reference interpreter must match them in float64 and in float32.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "tilesweep/base/source.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/interpreter.h"
#include "tilesweep/ir/npy.h"

namespace ts::ir {
namespace {

namespace fs = std::filesystem;

struct GoldenCase {
  std::string suite, kernel;
};

std::vector<GoldenCase> discover() {
  std::vector<GoldenCase> out;
  fs::path root = fs::path(TS_SOURCE_DIR) / "tests" / "golden";
  if (!fs::exists(root)) return out;
  for (const auto& suite : fs::directory_iterator(root)) {
    if (!suite.is_directory()) continue;
    for (const auto& k : fs::directory_iterator(suite.path()))
      if (k.is_directory())
        out.push_back({suite.path().filename().string(), k.path().filename().string()});
  }
  std::sort(out.begin(), out.end(),
            [](auto& a, auto& b) { return a.suite + a.kernel < b.suite + b.kernel; });
  return out;
}

sem::DimEnv read_shape(const fs::path& p) {
  std::string text = read_text_file(p.string());
  sem::DimEnv env;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t j = text.find_first_of(",\n", i);
    std::string part = text.substr(i, j == std::string::npos ? std::string::npos : j - i);
    std::size_t eq = part.find('=');
    if (eq != std::string::npos) env[part.substr(0, eq)] = std::stoll(part.substr(eq + 1));
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return env;
}

class Golden : public ::testing::TestWithParam<GoldenCase> {};

void compare(const std::vector<Tensor>& got, const fs::path& dir, double rtol, double atol,
             const char* mode) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    Tensor want = read_npy((dir / ("out." + std::to_string(i) + ".npy")).string());
    ASSERT_EQ(got[i].shape, want.shape) << mode << " output " << i;
    int bad = 0;
    for (std::size_t e = 0; e < want.data.size(); ++e) {
      double g = got[i].data[e], w = want.data[e];
      if (std::fabs(g - w) <= atol + rtol * std::fabs(w)) continue;
      if (++bad <= 3)
        ADD_FAILURE() << mode << " output " << i << " element " << e << ": got " << g << ", NumPy "
                      << w;
    }
    EXPECT_EQ(bad, 0) << mode << " output " << i << ": " << bad << " of " << want.data.size()
                      << " elements differ";
  }
  EXPECT_FALSE(fs::exists(dir / ("out." + std::to_string(got.size()) + ".npy")))
      << "kernel has fewer outputs than NumPy";
}

TEST_P(Golden, MatchesNumpy) {
  const GoldenCase& c = GetParam();
  fs::path dir = fs::path(TS_SOURCE_DIR) / "tests" / "golden" / c.suite / c.kernel;
  // A folder "<file>.<kernel>" names a kernel of a file that holds several.
  std::size_t dot = c.kernel.find('.');
  std::string stem = c.kernel.substr(0, dot);
  std::string name = dot == std::string::npos ? c.kernel : c.kernel.substr(dot + 1);
  fs::path file = fs::path(TS_SOURCE_DIR) / "jobs" / "kernels" / c.suite / (stem + ".py");
  Module m = load_module(file.string(), sem::OpTable::builtin());
  const Kernel& k = m.kernel(name);
  std::vector<Tensor> inputs;
  for (const auto& p : k.params)
    inputs.push_back(read_npy((dir / ("in." + p.name + ".npy")).string()));
  sem::DimEnv dims = read_shape(dir / "shape.txt");
  compare(evaluate(k, dims, inputs, Precision::F64), dir, 1e-6, 1e-9, "f64");
  // At f32 an astype to bf16 rounds (as NumPy's does); NumPy's reference is real-valued, so a
  // kernel with such a cast (the Llama attention's probabilities) is held to bf16's precision.
  double tol = 1e-4;
  for (const Node& n : k.nodes)
    if (n.spec && !n.spec->dtype_cast.empty() && n.dtype != DType::F32) tol = 1.0 / 64;
  compare(evaluate(k, dims, inputs, Precision::F32), dir, tol, tol, "f32");
}

INSTANTIATE_TEST_SUITE_P(Kernels, Golden, ::testing::ValuesIn(discover()), [](const auto& info) {
  std::string name = info.param.suite + "_" + info.param.kernel;
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
});

TEST(GoldenSuites, EveryBenchmarkKernelHasAFixture) {
  std::map<std::string, int> count;
  for (const auto& c : discover()) count[c.suite]++;
  EXPECT_EQ(count["axon"], 20);
  EXPECT_EQ(count["nkibench"], 14);
  for (const char* suite : {"axon", "nkibench"}) {
    int files = 0;
    for (const auto& f :
         fs::directory_iterator(fs::path(TS_SOURCE_DIR) / "jobs" / "kernels" / suite))
      files += f.path().extension() == ".py";
    EXPECT_EQ(files, count[suite]) << suite << ": a kernel file without a fixture";
  }
}

}  // namespace
}  // namespace ts::ir

// Bad kernels: every file in tests/errors/ starts with `# expect: <message>` and must fail to
// load with exactly that message (after the file name), as a UserError: never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tilesweep/base/source.h"
#include "tilesweep/ir/frontend.h"

namespace ts::ir {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> cases() {
  std::vector<std::string> out;
  for (const auto& f : fs::directory_iterator(fs::path(TS_SOURCE_DIR) / "tests" / "errors"))
    if (f.path().extension() == ".py") out.push_back(f.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string load_error(const std::string& path) {
  try {
    load_module(path, sem::OpTable::builtin());
  } catch (const UserError& e) {
    std::string w = e.what();
    if (w.rfind(path, 0) == 0) w = w.substr(path.size());
    return w;
  }
  return "no error";
}

class Errors : public ::testing::TestWithParam<std::string> {};

TEST_P(Errors, MessageIsExact) {
  std::string path = (fs::path(TS_SOURCE_DIR) / "tests" / "errors" / (GetParam() + ".py")).string();
  std::ifstream in(path, std::ios::binary);
  std::string first;
  std::getline(in, first);
  const std::string tag = "# expect: ";
  ASSERT_EQ(first.rfind(tag, 0), 0u) << "first line must be '# expect: ...'";
  EXPECT_EQ(load_error(path), first.substr(tag.size()));
}

INSTANTIATE_TEST_SUITE_P(Cases, Errors, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param; });

std::string write_tmp(const std::string& name, const std::string& content) {
  std::string p = (fs::temp_directory_path() / name).string();
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

TEST(ErrorsGenerated, EmptyFile) {
  std::string p = write_tmp("ts_empty.py", "");
  EXPECT_EQ(load_error(p),
            ":1:1: error: no kernels in this file: a kernel is a `def` whose parameters all have "
            "types, like `def k(x: f32[M, N]) -> f32[M, N]:`");
}

TEST(ErrorsGenerated, HugeFile) {
  std::string p = write_tmp("ts_huge.py", std::string(kMaxSourceBytes + 1, '#'));
  EXPECT_EQ(load_error(p), fmt::format("error: '{}' is {} bytes, more than the {} byte limit for "
                                       "input files; is this the right file?",
                                       p, kMaxSourceBytes + 1, kMaxSourceBytes));
}

// Issue 23: a device or pipe has no size to ask; reading stops one byte past the limit.
TEST(ErrorsGenerated, EndlessFileIsBounded) {
  EXPECT_EQ(load_error("/dev/zero"),
            fmt::format("error: '/dev/zero' holds more than the {} byte limit for input files (it "
                        "is not a regular file); is this the right file?",
                        kMaxSourceBytes));
}

TEST(ErrorsGenerated, MissingFile) {
  EXPECT_EQ(load_error("/nonexistent/k.py"),
            "error: cannot open '/nonexistent/k.py': No such file or directory");
}

TEST(ErrorsGenerated, DeepNestingIsALimitNotACrash) {
  std::string deep = "def f(x: f32[N]):\n    return " + std::string(100000, '-') + "x\n";
  std::string p = write_tmp("ts_deep.py", deep);
  EXPECT_EQ(load_error(p),
            ":2:211: error: expression nested more than 200 levels deep; split it into several "
            "statements");
}

// Issue 22: input size never drives recursion past the stack. Each kernel below crashed with
// SIGSEGV (or, for a zero dim, loaded) before the expression-height and evaluation-depth limits.
std::string repeat_joined(const std::string& item, const std::string& sep, int n) {
  std::string s = item;
  for (int i = 1; i < n; ++i) s += sep + item;
  return s;
}

std::string nested_helpers(int helpers, int negations) {
  std::string s;
  for (int i = 0; i < helpers; ++i)
    s += fmt::format("def h{}(t):\n    return {}h{}(t)\n\n", i,
                     repeat_joined("-", " ", negations) + " ", i + 1);
  return s +
         fmt::format("def h{}(t):\n    return t\n\ndef f(x: f32[N]):\n    return h0(x)\n", helpers);
}

struct SizeCase {
  const char* name;
  std::string text;
  std::string expect;  // "no error" when the kernel must load
};

const std::string kTooDeep =
    "error: expression nested too deeply (more than 500 levels; a chain of operators counts one "
    "level per operator); split it into named steps";

std::vector<SizeCase> size_cases() {
  const std::string head = "def f(x: f32[N, N]):\n    return ";
  return {
      {"sum_50000_terms", head + repeat_joined("x", " + ", 50000) + "\n", ":2:2010: " + kTooDeep},
      {"product_3000_terms", head + repeat_joined("x", " * ", 3000) + "\n", ":2:2010: " + kTooDeep},
      {"constant_sum_50000_terms", head + "x * (" + repeat_joined("1", " + ", 50000) + ")\n",
       ":2:2015: " + kTooDeep},
      {"transpose_chain_50000", head + "x" + repeat_joined(".T", "", 50000) + "\n",
       ":2:1011: " + kTooDeep},
      {"slice_chain_50000", head + "x" + repeat_joined("[:]", "", 50000) + "\n",
       ":2:1510: " + kTooDeep},
      {"dim_sum_5000_terms",
       "def f(x: f32[" + repeat_joined("N", " + ", 5000) + "]):\n    return x\n",
       ":1:2012: " + kTooDeep},
      {"sum_500_terms_loads", head + repeat_joined("x", " + ", 500) + "\n", "no error"},
      {"helpers_60_deep_150_negations", nested_helpers(60, 150),
       ":20:198: error: expression nested too deeply (more than 1000 levels, counting inlined "
       "helper calls); split it into named steps"},
      {"helpers_6_deep_150_negations_loads", nested_helpers(6, 150), "no error"},
      {"dim_expression_zero", "def f(x: f32[N, 2 - 2]):\n    return x\n",
       ":1:19: error: a dim must be positive, not 0: a tensor needs at least one element along "
       "every dim"},
  };
}

class SizeLimits : public ::testing::TestWithParam<SizeCase> {};

TEST_P(SizeLimits, ErrorNotCrash) {
  const SizeCase& c = GetParam();
  std::string p = write_tmp(std::string("ts_size_") + c.name + ".py", c.text);
  EXPECT_EQ(load_error(p), c.expect);
}

INSTANTIATE_TEST_SUITE_P(Generated, SizeLimits, ::testing::ValuesIn(size_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ts::ir

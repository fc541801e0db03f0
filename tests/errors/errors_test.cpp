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
  EXPECT_EQ(load_error(p), ":1:1: error: no kernels in this file: a kernel is a `def` whose parameters all have types, like `def k(x: f32[M, N]) -> f32[M, N]:`");
}

TEST(ErrorsGenerated, HugeFile) {
  std::string p = write_tmp("ts_huge.py", std::string(kMaxSourceBytes + 1, '#'));
  EXPECT_EQ(load_error(p), fmt::format("error: '{}' is {} bytes, more than the {} byte limit for input files; is this the right file?", p, kMaxSourceBytes + 1, kMaxSourceBytes));
}

// Issue 23: a device or pipe has no size to ask; reading stops one byte past the limit.
TEST(ErrorsGenerated, EndlessFileIsBounded) {
  EXPECT_EQ(load_error("/dev/zero"), fmt::format("error: '/dev/zero' holds more than the {} byte limit for input files (it is not a regular file); is this the right file?", kMaxSourceBytes));
}

TEST(ErrorsGenerated, MissingFile) {
  EXPECT_EQ(load_error("/nonexistent/k.py"), "error: cannot open '/nonexistent/k.py': No such file or directory");
}

TEST(ErrorsGenerated, DeepNestingIsALimitNotACrash) {
  std::string deep = "def f(x: f32[N]):\n    return " + std::string(100000, '-') + "x\n";
  std::string p = write_tmp("ts_deep.py", deep);
  EXPECT_EQ(load_error(p), ":2:211: error: expression nested more than 200 levels deep; split it into several statements");
}

}  // namespace
}  // namespace ts::ir

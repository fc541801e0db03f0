// Bad jobs: every file in tests/jobs/ starts with `# expect: :LINE:COL: error: <message start>`
// and must fail to load with a UserError at that line and column of that file whose message
// starts so: never a crash, never a silently ignored mistake.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tilesweep/sweep/job.h"

namespace ts::sweep {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> cases() {
  std::vector<std::string> out;
  for (const auto& f : fs::directory_iterator(fs::path(TS_SOURCE_DIR) / "tests" / "jobs"))
    if (f.path().extension() == ".toml") out.push_back(f.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

class BadJobs : public ::testing::TestWithParam<std::string> {};

TEST_P(BadJobs, FailAtTheRightPlaceWithTheMessage) {
  std::string path = (fs::path(TS_SOURCE_DIR) / "tests" / "jobs" / (GetParam() + ".toml")).string();
  std::ifstream in(path, std::ios::binary);
  std::string first;
  std::getline(in, first);
  const std::string tag = "# expect: ";
  ASSERT_EQ(first.rfind(tag, 0), 0u) << "first line must be '# expect: ...'";
  std::string expect = first.substr(tag.size());
  int line = 0, col = 0;
  ASSERT_EQ(std::sscanf(expect.c_str(), ":%d:%d:", &line, &col), 2)
      << "expect must start with :LINE:COL:";
  try {
    load_job(path);
    FAIL() << "loaded without error; expected " << expect;
  } catch (const UserError& e) {
    std::string what = e.what();
    EXPECT_EQ(e.loc().file, path);
    EXPECT_EQ(e.loc().line, line);
    EXPECT_EQ(e.loc().col, col);
    ASSERT_EQ(what.rfind(path, 0), 0u) << what;
    EXPECT_EQ(what.substr(path.size()).rfind(expect, 0), 0u)
        << "message: " << what << "\nexpected: " << expect;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, BadJobs, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param; });

TEST(BadJobs, SuiteIsNotEmpty) { EXPECT_GE(cases().size(), 15u); }

}  // namespace
}  // namespace ts::sweep

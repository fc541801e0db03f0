// A journal is tied to its job and its plan: --resume refuses another job's journal, a journal
// recorded against another plan of the same job, and one that does not say which plan it had.
#include "tilesweep/sweep/run_identity.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>

#include "tilesweep/base/error.h"
#include "tilesweep/store/journal.h"

namespace ts::sweep {
namespace {

struct Case {
  const char* name;
  std::string header;       // what the journal's header holds ("" : an empty file)
  std::string job, digest;  // this run's
  std::string error;        // "" : accepted
};

class JournalIdentity : public ::testing::TestWithParam<Case> {};

TEST_P(JournalIdentity, IsCheckedAgainstTheRun) {
  const Case& c = GetParam();
  const std::string path =
      ::testing::TempDir() + "/identity-" + std::to_string(::getpid()) + ".journal";
  std::filesystem::remove(path);
  if (c.header.empty()) {
    std::ofstream(path).flush();
  } else {
    store::Journal::open(path, c.header);
  }
  std::string got;
  try {
    check_journal_plan(path, c.job, c.digest);
  } catch (const UserError& e) {
    got = e.what();
  }
  std::filesystem::remove(path);
  if (c.error.empty())
    EXPECT_EQ(got, "") << c.name;
  else
    EXPECT_NE(got.find(c.error), std::string::npos) << c.name << ": " << got;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JournalIdentity,
    ::testing::Values(
        Case{"same job, same plan", run_identity("aaaa", "1111"), "aaaa", "1111", ""},
        Case{"empty journal", "", "aaaa", "1111", ""},
        Case{"another plan", run_identity("aaaa", "1111"), "aaaa", "2222",
             "was recorded against another plan of this job (plan digest 1111, this run's 2222)"},
        Case{"another job", run_identity("bbbb", "1111"), "aaaa", "1111",
             "belongs to a different job"},
        Case{"no plan recorded", "aaaa", "aaaa", "1111", "did not record its plan"}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& ch : n) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
      return n;
    });

TEST(RunIdentity, JoinsJobHashAndPlanDigest) {
  EXPECT_EQ(run_identity("aaaa", "1111"), "aaaa.1111");
}

}  // namespace
}  // namespace ts::sweep

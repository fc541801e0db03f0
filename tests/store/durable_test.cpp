// base/durable_file.h: the one way tilesweep writes a file (issue 23).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "temp_dir_test.h"
#include "tilesweep/base/durable_file.h"
#include "tilesweep/base/error.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

class DurableTest : public store::test::TempDirTest {
 protected:
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {}));
  }
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST_F(DurableTest, ReplacesTheWholeFileAndLeavesNoTemporary) {
  std::string p = path("cache");
  write_file_durably(p, std::string(100000, 'a'), "the proof cache");
  write_file_durably(p, "short", "the proof cache");
  EXPECT_EQ(store::test::read_bytes(p), "short");  // never the old file's tail
  EXPECT_EQ(entries(), 1u);
  write_file_durably(p, "", "the proof cache");
  EXPECT_EQ(fs::file_size(p), 0u);
}

TEST_F(DurableTest, FailuresAreErrorsAndLeaveTheOldFile) {
  std::string p = path("lib.json");
  write_file_durably(p, "old", "--json file");
  std::string missing = path("no/such/folder/x.json");
  EXPECT_EQ(error_of([&] { write_file_durably(missing, "x", "--json file"); }),
            "error: cannot write --json file '" + missing + "': No such file or directory");
  fs::create_directories(path("dir.json"));
  EXPECT_EQ(
      error_of([&] {
        write_file_durably(path("dir.json"), "x", "--json file");
      }).rfind("error: cannot write --json file '" + path("dir.json") + "': cannot rename", 0),
      0u);
  EXPECT_EQ(store::test::read_bytes(p), "old");
  EXPECT_EQ(entries(), 2u) << "no temporary left behind";
}

TEST_F(DurableTest, CheckWritableTestsThePathItself) {
  check_writable(path("a.h5"), "--archive");
  EXPECT_EQ(entries(), 0u);
  std::string missing = path("gone/a.h5");
  EXPECT_EQ(
      error_of([&] { check_writable(missing, "--archive"); }),
      "error: --archive: cannot write in folder '" + path("gone") + "': No such file or directory");
  EXPECT_EQ(error_of([&] { check_writable(dir_.string(), "--archive"); }),
            "error: --archive: '" + dir_.string() + "' is a folder; name a file in it");
}

}  // namespace
}  // namespace ts

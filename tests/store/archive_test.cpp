#include "tilesweep/store/archive.h"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "sample.h"
#include "temp_dir_test.h"
#include "tilesweep/base/error.h"

namespace ts::store {
namespace {

namespace fs = std::filesystem;
using test::dump;
using test::dump_all;

class ArchiveTest : public test::TempDirTest {};

void expect_same(const Archive& want, const Archive& got) {
  EXPECT_EQ(dump(want.meta), dump(got.meta));
  ASSERT_EQ(want.candidates.size(), got.candidates.size());
  EXPECT_EQ(dump_all(want.candidates), dump_all(got.candidates));
  EXPECT_EQ(dump_all(want.best), dump_all(got.best));
  EXPECT_EQ(dump_all(want.proofs), dump_all(got.proofs));
  EXPECT_EQ(dump_all(want.progress), dump_all(got.progress));
}

struct RoundTripCase {
  const char* name;
  std::function<Archive()> make;
};

Archive odd_strings() {
  Archive a = test::sample_archive(20);
  a.candidates[0].config = std::string(70000, 'x') + "end";  // far wider than any other row
  a.candidates[1].kernel = "ünïcødé_kernel_µs";
  a.candidates[2] = CandidateRecord{};             // all defaults: empty strings, NaN latencies
  a.candidates[3].reason = std::string(300, ' ');  // trailing spaces are kept
  a.proofs[0].text = std::string(100000, 'q');
  a.meta.job_toml = std::string(200000, '#');  // attribute far past HDF5's 64 KiB compact limit
  a.meta.targets.clear();
  a.meta.phase_seconds.clear();
  a.meta.git_commit = "";
  return a;
}

// Text up to 1024 bytes is fixed-width, longer text variable-length; both read back whole.
Archive wide_text() {
  Archive a = test::sample_archive(3000);
  a.candidates[10].config = std::string(1024, 'c');
  a.candidates[11].reason = std::string(1025, 'r');
  a.best[0].shape = std::string(1023, 's') + "é";
  return a;
}

TEST_F(ArchiveTest, RoundTrip) {
  const RoundTripCase cases[] = {
      {"empty tables",
       [] {
         return Archive{test::sample_meta(), {}, {}, {}, {}};
       }},
      {"default meta", [] { return Archive{}; }},
      {"one of each", [] { return test::sample_archive(1); }},
      {"nan and odd strings", odd_strings},
      {"wide text", wide_text},
      {"100k candidates", [] { return test::sample_archive(100000); }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Archive want = c.make();
    std::string p = path("a.h5");
    write_archive(p, want);
    expect_same(want, read_archive(p));
    EXPECT_EQ(dump(want.meta), dump(read_meta(p)));
  }
}

TEST_F(ArchiveTest, CompressesLargeTables) {
  std::string p = path("big.h5");
  write_archive(p, test::sample_archive(100000));
  // ~200 bytes per raw row; shuffle + deflate must do much better.
  EXPECT_LT(fs::file_size(p), 100000u * 50u);
}

// HDF5 builds the file in memory; write_file_durably puts it on disk through a temporary of its
// own, which never collides with a leftover of a crashed run (left alone) and never survives.
TEST_F(ArchiveTest, WritesThroughTmpAndRename) {
  std::string p = path("a.h5");
  std::ofstream(p + ".tmp") << "stale leftover of a crashed run";
  write_archive(p, test::sample_archive(3));
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_)) names.insert(e.path().filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"a.h5", "a.h5.tmp"}));
  EXPECT_EQ(read_archive(p).candidates.size(), 3u);
}

TEST_F(ArchiveTest, FailedWriteKeepsOldArchive) {
  std::string p = path("a.h5");
  write_archive(p, test::sample_archive(3));
  Archive bad = test::sample_archive(5);
  bad.candidates[4].config = std::string("a\0b", 3);
  try {
    write_archive(p, bad);
    FAIL() << "a NUL byte was written";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("error: cannot write archive '" + p +
                                              "': column 'config' of "
                                              "/candidates row 4 holds a NUL byte",
                                          0),
              0u)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(p + ".tmp"));
  EXPECT_EQ(read_archive(p).candidates.size(), 3u);
}

TEST_F(ArchiveTest, UnwritableFolder) {
  std::string p = path("no/such/folder/a.h5");
  try {
    write_archive(p, test::sample_archive(1));
    FAIL() << "wrote into a missing folder";
  } catch (const UserError& e) {
    std::string what = e.what();
    EXPECT_EQ(what, "error: cannot write archive '" + p + "': No such file or directory");
  }
}

// HDF5 files that are not tilesweep archives, made with the C API directly.
void forge(const std::string& p, const std::function<void(hid_t)>& fill) {
  hid_t f = H5Fcreate(p.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  fill(f);
  H5Fclose(f);
}

void make_group(hid_t f, const char* name) {
  H5Gclose(H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
}

void drop(const std::string& p, const char* name) {
  hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  ASSERT_GE(H5Ldelete(f, name, H5P_DEFAULT), 0);
  H5Fclose(f);
}

void truncate_to(const std::string& p, double fraction) {
  fs::resize_file(p, static_cast<std::uintmax_t>(fs::file_size(p) * fraction));
}

struct BadCase {
  const char* name;
  std::function<void(const std::string&)> make;  // creates the bad file at the path
  std::string expect;                            // message prefix after "error: ", <p> = path
};

TEST_F(ArchiveTest, BadInputs) {
  Archive good = test::sample_archive(2000);
  const BadCase cases[] = {
      {"missing", [](auto&) {}, "cannot open archive '<p>': No such file or directory"},
      {"folder", [](auto& p) { fs::create_directory(p); },
       "cannot open archive '<p>': it is a folder"},
      {"text file", [](auto& p) { std::ofstream(p) << "name = \"job\"\n"; },
       "not a tilesweep archive: '<p>' is not an HDF5 file"},
      {"empty file", [](auto& p) { std::ofstream{p}; },
       "not a tilesweep archive: '<p>' is not an HDF5 file"},
      {"no meta", [](auto& p) { forge(p, [](hid_t f) { make_group(f, "data"); }); },
       "not a tilesweep archive: '<p>' has no /meta group"},
      {"meta without format", [](auto& p) { forge(p, [](hid_t f) { make_group(f, "meta"); }); },
       "not a tilesweep archive: '<p>' has no /meta attribute format = \"tilesweep-archive\""},
      {"other schema",
       [](auto& p) {
         Archive a;
         a.meta.schema_version = 99;
         write_archive(p, a);
       },
       "not a tilesweep archive: '<p>' has schema version 99 (this tilesweep reads versions 1 to "
       "4)"},
      {"schema before the first",
       [](auto& p) {
         Archive a;
         a.meta.schema_version = 0;
         write_archive(p, a);
       },
       "not a tilesweep archive: '<p>' has schema version 0 (this tilesweep reads versions 1 to "
       "4)"},
      {"missing table",
       [&](auto& p) {
         write_archive(p, good);
         drop(p, "progress");
       },
       "not a tilesweep archive: '<p>' has no /progress table"},
      {"truncated to 90%",
       [&](auto& p) {
         write_archive(p, good);
         truncate_to(p, 0.9);
       },
       "truncated or corrupt HDF5 file: '<p>' (open: "},
      {"truncated to 10%",
       [&](auto& p) {
         write_archive(p, good);
         truncate_to(p, 0.1);
       },
       "truncated or corrupt HDF5 file: '<p>' (open: "},
  };
  int n = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::string p = path(fmt::format("bad{}.h5", n++));
    c.make(p);
    std::string expect = "error: " + c.expect;
    expect.replace(expect.find("<p>"), 3, p);
    for (int meta_only = 0; meta_only < 2; ++meta_only) {
      try {
        meta_only ? (void)read_meta(p) : (void)read_archive(p);
        ADD_FAILURE() << "no error";
      } catch (const UserError& e) {
        EXPECT_EQ(std::string(e.what()).substr(0, expect.size()), expect) << e.what();
      }
      if (std::string(c.name) == "missing table") break;  // read_meta never looks at tables
    }
  }
}

TEST_F(ArchiveTest, DamagedTableIsCorrupt) {
  // Overwritten chunk bytes: the file opens, and reading /candidates fails.
  std::string p = path("a.h5");
  write_archive(p, test::sample_archive(50000));
  auto size = fs::file_size(p);
  {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    std::string junk(size / 4, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  try {
    read_archive(p);
    FAIL() << "read a damaged archive";
  } catch (const UserError& e) {
    // Fletcher32 catches the damaged chunk: the message names the table.
    std::string expect = "error: damaged archive '" + p + "': read /candidates: H5Dread(): ";
    EXPECT_EQ(std::string(e.what()).substr(0, expect.size()), expect) << e.what();
    EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_meta(p).status, "complete");  // /meta sits before the tables
}

}  // namespace
}  // namespace ts::store

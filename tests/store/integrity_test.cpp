// Issue 23: one flipped byte anywhere in an archive or a shape library is either harmless (a
// byte HDF5 never reads) or refused with a UserError naming the file — never a crash, never a
// silently different answer. Files without checksums (an older tilesweep's) are still read.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "sample.h"
#include "temp_dir_test.h"
#include "tilesweep/base/error.h"
#include "tilesweep/store/archive.h"
#include "tilesweep/store/library.h"

namespace ts::store {
namespace {

namespace fs = std::filesystem;
using test::dump;
using test::dump_all;

class IntegrityTest : public test::TempDirTest {};

void write_bytes(const std::string& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

Archive varied_archive() {
  Archive a = test::sample_archive(40);
  a.candidates[3].config = std::string(3000, 'c');  // a variable-length column (global heap)
  a.meta.job_toml = "name = \"flip\"\n" + std::string(2000, '#');
  return a;
}

std::string dump_archive(const Archive& a) {
  std::string s = dump(a.meta);
  for (const auto& v :
       {dump_all(a.candidates), dump_all(a.best), dump_all(a.proofs), dump_all(a.progress)})
    for (const auto& r : v) s += r + "\n";
  return s;
}

std::string dump_library(const Library& l) {
  std::string s = l.tool_version + "|" + fmt::format("{}", fmt::join(l.archives, ",")) + "\n";
  for (const auto& e : l.entries)
    s += fmt::format("{} {} {} {} {} {} {} {} {} {} {}\n", e.kernel, e.target, e.shape, e.mesh,
                     e.config, e.index, e.latency_ns, e.archive, e.job_name, e.nki, e.nki_error);
  return s;
}

struct FlipCounts {
  int refused = 0, harmless = 0;
  std::vector<std::string> silent;  // offsets read back differently without an error
};

// Flips every `step`-th byte (every 3rd of the first 512: the superblock and root headers) in
// turn and reads the copy.
FlipCounts flip_each(const std::string& good, const std::string& copy, std::size_t step,
                     const std::function<std::string(const std::string&)>& read_dump) {
  const std::string bytes = test::read_bytes(good), want = read_dump(good);
  FlipCounts n;
  for (std::size_t at = 0; at < bytes.size(); at += at < 512 ? 3 : step) {
    std::string bad = bytes;
    bad[at] = static_cast<char>(bad[at] ^ 0x10);
    write_bytes(copy, bad);
    try {
      if (read_dump(copy) == want)
        ++n.harmless;
      else
        n.silent.push_back(std::to_string(at));
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + copy + "'"), std::string::npos) << e.what();
      ++n.refused;
    }
  }
  return n;
}

TEST_F(IntegrityTest, FlippedArchiveByteIsRefusedOrHarmless) {
  std::string p = path("a.h5");
  write_archive(p, varied_archive());
  FlipCounts n = flip_each(p, path("bad.h5"), 23,
                           [](const std::string& f) { return dump_archive(read_archive(f)); });
  EXPECT_TRUE(n.silent.empty()) << "read differently, no error, after flipping byte(s) "
                                << fmt::format("{}", fmt::join(n.silent, " "));
  EXPECT_GT(n.refused, 50);
}

TEST_F(IntegrityTest, FlippedLibraryByteIsRefusedOrHarmless) {
  Library lib;
  lib.tool_version = "test";
  lib.archives = {"a.h5", "b.h5"};
  for (int i = 0; i < 6; ++i) {
    LibraryEntry e;
    e.kernel = "softmax", e.target = i % 2 ? "trn1" : "trn2",
    e.shape = fmt::format("M={}", 128 << i);
    e.config = "strip=128", e.latency_ns = 1000.0 + i, e.archive = "a.h5", e.job_name = "job";
    e.nki =
        fmt::format("@nki.jit\ndef softmax_{}(x):\n", i) + std::string(1500, 'n');  // past 1 KiB
    lib.entries.push_back(e);
  }
  std::string p = path("lib.h5");
  write_library(p, lib);
  FlipCounts n = flip_each(p, path("bad.h5"), 17,
                           [](const std::string& f) { return dump_library(read_library(f)); });
  EXPECT_TRUE(n.silent.empty()) << "read differently, no error, after flipping byte(s) "
                                << fmt::format("{}", fmt::join(n.silent, " "));
  EXPECT_GT(n.refused, 50);
}

// The damaged part is named: a /meta attribute (HDF5's own metadata checksum), a table whose rows
// were changed behind the checksum's back (HDF5 rewrote the chunk, so Fletcher32 holds).
TEST_F(IntegrityTest, DamageNamesThePart) {
  std::string p = path("a.h5");
  Archive a = varied_archive();
  write_archive(p, a);
  std::string bytes = test::read_bytes(p);
  auto at = bytes.find(std::string(2000, '#'));  // the job text
  ASSERT_NE(at, std::string::npos);
  bytes[at + 1000] = '%';
  write_bytes(p, bytes);
  try {
    read_archive(p);
    FAIL() << "read a damaged job text";
  } catch (const UserError& e) {
    std::string want = "error: damaged archive '" + p + "': ";
    EXPECT_EQ(std::string(e.what()).substr(0, want.size()), want) << e.what();
    EXPECT_NE(std::string(e.what()).find("attribute 'job_toml'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
  }
  write_archive(p, a);
  hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  hid_t ds = H5Dopen2(f, "best", H5P_DEFAULT), type = H5Dget_type(ds);
  std::string rows(H5Tget_size(type) * a.best.size(), '\0');
  ASSERT_GE(H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), 0);
  rows[0] = 'X';  // the first row's kernel name
  ASSERT_GE(H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), 0);
  H5Tclose(type), H5Dclose(ds), H5Fclose(f);
  try {
    read_archive(p);
    FAIL() << "read a changed /best";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "error: damaged archive '" + p +
                  "': /best does not match its checksum; it "
                  "cannot be trusted: restore it from a copy or run its job again");
  }
}

// An archive of an older tilesweep (no checksums) is read as before, unchecked.
TEST_F(IntegrityTest, ArchiveWithoutChecksumsIsRead) {
  std::string p = path("old.h5");
  Archive a = varied_archive();
  write_archive(p, a);
  hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  hid_t meta = H5Gopen2(f, "meta", H5P_DEFAULT);
  EXPECT_GE(H5Adelete(meta, "checksums"), 0);
  H5Gclose(meta);
  for (const char* t : {"candidates", "best", "proofs", "progress"}) {
    hid_t ds = H5Dopen2(f, t, H5P_DEFAULT);
    EXPECT_GE(H5Adelete(ds, "checksum"), 0);
    H5Dclose(ds);
  }
  H5Fclose(f);
  EXPECT_EQ(dump_archive(read_archive(p)), dump_archive(a));
}

}  // namespace
}  // namespace ts::store

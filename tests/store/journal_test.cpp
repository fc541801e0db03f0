#include "tilesweep/store/journal.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "sample.h"
#include "tilesweep/base/error.h"

namespace ts::store {
namespace {

namespace fs = std::filesystem;
using test::dump;
using test::dump_all;

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("ts_journal_{}_{}", ::testing::UnitTest::GetInstance()->current_test_info()->name(), ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

std::string expect_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JournalPath, NextToArchive) { EXPECT_EQ(journal_path("results/a.h5"), "results/a.h5.journal"); }

TEST_F(JournalTest, RoundTrip) {
  std::string p = path("j");
  std::vector<UnitResult> units = {test::sample_unit(7, 3), test::sample_unit(2, 0), test::sample_unit(9, 40)};
  std::vector<ProofRecord> proofs = {test::sample_proof(0), test::sample_proof(1), test::sample_proof(2)};
  units[0].candidates[1].reason = std::string(100000, 'r');
  units[0].candidates[2].config = std::string("nul\0inside", 10);  // the journal keeps any bytes
  {
    Journal j = Journal::open(p, "hash-1");
    EXPECT_TRUE(j.take_recovered().units.empty());
    j.append(units[0]);
    j.append_proofs(std::span(proofs).first(2));
    j.append(units[1]);
    j.append_proofs(std::span(proofs).subspan(2));
    j.append(units[2]);
  }
  JournalContents c = read_journal(p, "hash-1");
  EXPECT_EQ(c.job_hash, "hash-1");
  EXPECT_EQ(dump_all(c.units), dump_all(units));
  EXPECT_EQ(dump_all(c.proofs), dump_all(proofs));
  EXPECT_EQ(c.frames, 6);
  EXPECT_EQ(c.dropped_bytes, 0);
  EXPECT_EQ(c.valid_bytes, static_cast<std::int64_t>(fs::file_size(p)));
  // Reopening hands back the same contents and appends after them.
  Journal j = Journal::open(p, "hash-1");
  EXPECT_EQ(dump_all(j.take_recovered().units), dump_all(units));
  j.append(test::sample_unit(11, 1));
  EXPECT_EQ(read_journal(p).units.size(), 4u);
}

// Writes a header and `n` unit frames; returns the file size after each frame (header first).
std::vector<std::int64_t> write_units(const std::string& p, int n) {
  std::vector<std::int64_t> ends;
  Journal j = Journal::open(p, "job");
  ends.push_back(static_cast<std::int64_t>(fs::file_size(p)));
  for (int u = 0; u < n; ++u) {
    j.append(test::sample_unit(u, u % 4));
    ends.push_back(static_cast<std::int64_t>(fs::file_size(p)));
  }
  return ends;
}

TEST_F(JournalTest, TornTailKeepsCompleteFrames) {
  std::string p = path("j");
  auto ends = write_units(p, 12);
  std::vector<std::int64_t> cuts = {0, 1, 3, 4, 23, 24, ends[0] - 1, ends[0], ends[0] + 1, ends[5] - 1,
                                    ends[5], ends[5] + 7, ends.back() - 1, ends.back()};
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 40; ++i) cuts.push_back(static_cast<std::int64_t>(rng() % (ends.back() + 1)));
  for (std::int64_t cut : cuts) {
    SCOPED_TRACE(fmt::format("cut at byte {} of {}", cut, ends.back()));
    std::string q = path("cut");
    fs::copy_file(p, q, fs::copy_options::overwrite_existing);
    fs::resize_file(q, static_cast<std::uintmax_t>(cut));
    JournalContents c = read_journal(q, "job");
    // Frames whose last byte lies before the cut survive, every other byte is dropped.
    std::int64_t complete = std::upper_bound(ends.begin(), ends.end(), cut) - ends.begin();
    std::int64_t valid = complete == 0 ? 0 : ends[complete - 1];
    EXPECT_EQ(c.frames, complete);
    EXPECT_EQ(static_cast<std::int64_t>(c.units.size()), std::max<std::int64_t>(complete - 1, 0));
    EXPECT_EQ(c.valid_bytes, valid);
    EXPECT_EQ(c.dropped_bytes, cut - valid);
    EXPECT_EQ(c.job_hash, complete > 0 ? "job" : "");
    for (std::size_t u = 0; u < c.units.size(); ++u)
      EXPECT_EQ(dump(c.units[u]), dump(test::sample_unit(static_cast<std::int64_t>(u), u % 4)));
  }
}

TEST_F(JournalTest, ReopenAfterTearAppendsAfterValidFrames) {
  const std::int64_t cuts_into[] = {0, 1, 2, 5};  // frame whose middle the file ends in
  for (std::int64_t frame : cuts_into) {
    SCOPED_TRACE(fmt::format("torn frame {}", frame));
    std::string p = path(fmt::format("j{}", frame));
    auto ends = write_units(p, 5);
    std::int64_t start = frame == 0 ? 0 : ends[frame - 1];
    fs::resize_file(p, static_cast<std::uintmax_t>((start + ends[frame]) / 2));
    {
      Journal j = Journal::open(p, "job");
      EXPECT_EQ(j.take_recovered().units.size(), static_cast<std::size_t>(std::max<std::int64_t>(frame - 1, 0)));
      j.append(test::sample_unit(100, 2));
    }
    JournalContents c = read_journal(p, "job");
    EXPECT_EQ(c.dropped_bytes, 0);
    ASSERT_EQ(c.units.size(), static_cast<std::size_t>(std::max<std::int64_t>(frame - 1, 0) + 1));
    EXPECT_EQ(c.units.back().progress.unit, 100);
  }
}

TEST_F(JournalTest, CorruptFrameEndsValidPrefix) {
  std::string p = path("j");
  auto ends = write_units(p, 4);
  {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(ends[2] + 30);  // inside the third unit frame's payload
    f.put('\x7f');
  }
  JournalContents c = read_journal(p, "job");
  EXPECT_EQ(c.units.size(), 2u);
  EXPECT_EQ(c.dropped_bytes, ends.back() - ends[2]);
}

TEST_F(JournalTest, DuplicateUnitsKeepFirst) {
  std::string p = path("j");
  UnitResult first = test::sample_unit(1, 2);
  UnitResult redo = test::sample_unit(1, 5);  // same id, redone after a crash
  {
    Journal j = Journal::open(p, "job");
    j.append(first);
    j.append(test::sample_unit(2, 1));
    j.append(redo);
    ProofRecord proofs[] = {test::sample_proof(0), test::sample_proof(0), test::sample_proof(1)};
    j.append_proofs(proofs);
    j.append_proofs(std::span(proofs).first(1));
  }
  JournalContents c = read_journal(p);
  ASSERT_EQ(c.units.size(), 2u);
  EXPECT_EQ(dump(c.units[0]), dump(first));
  EXPECT_EQ(c.units[1].progress.unit, 2);
  EXPECT_EQ(c.duplicate_units, 1);
  EXPECT_EQ(dump_all(c.proofs), dump_all(std::vector{test::sample_proof(0), test::sample_proof(1)}));
}

TEST_F(JournalTest, Refusals) {
  std::string p = path("j");
  { Journal::open(p, "job-a").append(test::sample_unit(1, 1)); }
  std::string other = "error: journal '" + p + "' belongs to a different job (job hash job-a, this job job-b); "
                      "use a new archive path or delete it";
  EXPECT_EQ(expect_error([&] { Journal::open(p, "job-b"); }), other);
  EXPECT_EQ(expect_error([&] { read_journal(p, "job-b"); }), other);
  EXPECT_EQ(read_journal(p, "job-a").units.size(), 1u);  // the refused open changed nothing

  Journal held = Journal::open(p, "job-a");
  EXPECT_EQ(expect_error([&] { Journal::open(p, "job-a"); }),
            "error: journal '" + p + "' is in use by another tilesweep process");

  std::string text = path("text"), tiny = path("tiny"), torn = path("torn"), missing = path("missing");
  std::ofstream(text) << "this is a job file, not a journal; long enough for a frame head";
  std::ofstream(tiny) << "ab";
  std::ofstream(torn) << "TS";  // a header frame cut after two bytes
  EXPECT_EQ(expect_error([&] { read_journal(text); }),
            "error: '" + text + "' is not a tilesweep journal: it does not start with a journal frame");
  EXPECT_EQ(expect_error([&] { Journal::open(text, "job"); }),
            "error: '" + text + "' is not a tilesweep journal: it does not start with a journal frame");
  EXPECT_EQ(fs::file_size(text), 63u) << "a refused open must leave the file alone";
  EXPECT_EQ(expect_error([&] { read_journal(tiny); }),
            "error: '" + tiny + "' is not a tilesweep journal: it does not start with a journal frame");
  EXPECT_EQ(read_journal(torn).dropped_bytes, 2);
  EXPECT_EQ(expect_error([&] { read_journal(missing); }),
            "error: cannot open journal '" + missing + "': No such file or directory");
}

}  // namespace
}  // namespace ts::store

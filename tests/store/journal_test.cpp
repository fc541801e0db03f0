#include "tilesweep/store/journal.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "sample.h"
#include "temp_dir_test.h"
#include "tilesweep/base/error.h"
#include "tilesweep/base/hash.h"

namespace ts::store {
namespace {

namespace fs = std::filesystem;
using test::dump;
using test::dump_all;

class JournalTest : public test::TempDirTest {};

std::string expect_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JournalPath, NextToArchive) {
  EXPECT_EQ(journal_path("results/a.h5"), "results/a.h5.journal");
}

TEST_F(JournalTest, RoundTrip) {
  std::string p = path("j");
  std::vector<UnitResult> units = {test::sample_unit(7, 3), test::sample_unit(2, 0),
                                   test::sample_unit(9, 40)};
  std::vector<ProofRecord> proofs = {test::sample_proof(0), test::sample_proof(1),
                                     test::sample_proof(2)};
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
  EXPECT_EQ(c.frames, 7);  // the header twice, three units, two proof frames
  EXPECT_EQ(c.dropped_bytes, 0);
  EXPECT_EQ(c.valid_bytes, static_cast<std::int64_t>(fs::file_size(p)));
  // Reopening hands back the same contents and appends after them.
  Journal j = Journal::open(p, "hash-1");
  EXPECT_EQ(dump_all(j.take_recovered().units), dump_all(units));
  j.append(test::sample_unit(11, 1));
  EXPECT_EQ(read_journal(p).units.size(), 4u);
}

// Group commit: staged units reach the file only at commit(), all of them in one write; the
// file then reads exactly as if each had been appended on its own.
TEST_F(JournalTest, StagedUnitsAreWrittenAtCommit) {
  std::string staged = path("staged"), appended = path("appended");
  std::vector<UnitResult> units = {test::sample_unit(4, 2), test::sample_unit(1, 0),
                                   test::sample_unit(8, 5)};
  Journal j = Journal::open(staged, "job");
  auto header_only = fs::file_size(staged);
  j.commit();  // nothing staged: nothing written
  EXPECT_EQ(fs::file_size(staged), header_only);
  for (const auto& u : units) j.stage(u);
  EXPECT_EQ(j.staged_units(), 3u);
  EXPECT_EQ(fs::file_size(staged), header_only);
  EXPECT_TRUE(read_journal(staged, "job").units.empty());
  j.commit();
  EXPECT_EQ(j.staged_units(), 0u);
  EXPECT_EQ(dump_all(read_journal(staged, "job").units), dump_all(units));
  {
    Journal one = Journal::open(appended, "job");
    for (const auto& u : units) one.append(u);
  }
  EXPECT_EQ(test::read_bytes(staged), test::read_bytes(appended));
}

// Writes the header (twice) and `n` unit frames; returns the file size after each frame
// (the two header copies first).
std::vector<std::int64_t> write_units(const std::string& p, int n) {
  std::vector<std::int64_t> ends;
  Journal j = Journal::open(p, "job");
  auto headers = static_cast<std::int64_t>(fs::file_size(p));
  ends.push_back(headers / 2);
  ends.push_back(headers);
  for (int u = 0; u < n; ++u) {
    j.append(test::sample_unit(u, u % 4));
    ends.push_back(static_cast<std::int64_t>(fs::file_size(p)));
  }
  return ends;
}

TEST_F(JournalTest, TornTailKeepsCompleteFrames) {
  std::string p = path("j");
  auto ends = write_units(p, 12);
  std::vector<std::int64_t> cuts = {0,           1,           3,           4,
                                    23,          24,          ends[0] - 1, ends[0],
                                    ends[0] + 1, ends[1] - 1, ends[1],     ends[1] + 1,
                                    ends[5] - 1, ends[5],     ends[5] + 7, ends.back() - 1,
                                    ends.back()};
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 40; ++i) cuts.push_back(static_cast<std::int64_t>(rng() % (ends.back() + 1)));
  for (std::int64_t cut : cuts) {
    SCOPED_TRACE(fmt::format("cut at byte {} of {}", cut, ends.back()));
    std::string q = path("cut");
    fs::copy_file(p, q, fs::copy_options::overwrite_existing);
    fs::resize_file(q, static_cast<std::uintmax_t>(cut));
    JournalContents c = read_journal(q, "job");
    // Frames whose last byte lies before the cut survive, every other byte is a torn tail.
    std::int64_t complete = std::upper_bound(ends.begin(), ends.end(), cut) - ends.begin();
    std::int64_t valid = complete == 0 ? 0 : ends[complete - 1];
    EXPECT_EQ(c.frames, complete);
    EXPECT_EQ(static_cast<std::int64_t>(c.units.size()), std::max<std::int64_t>(complete - 2, 0));
    EXPECT_EQ(c.valid_bytes, valid);
    EXPECT_EQ(c.dropped_bytes, cut - valid);
    EXPECT_EQ(c.torn_bytes, cut - valid);
    EXPECT_EQ(c.damaged_frames, 0);
    EXPECT_EQ(c.job_hash, complete > 0 ? "job" : "");
    for (std::size_t u = 0; u < c.units.size(); ++u)
      EXPECT_EQ(dump(c.units[u]), dump(test::sample_unit(static_cast<std::int64_t>(u), u % 4)));
  }
}

TEST_F(JournalTest, ReopenAfterTearAppendsAfterValidFrames) {
  const std::int64_t cuts_into[] = {0, 1, 2, 3,
                                    6};  // frame whose middle the file ends in (0, 1: headers)
  for (std::int64_t frame : cuts_into) {
    SCOPED_TRACE(fmt::format("torn frame {}", frame));
    std::string p = path(fmt::format("j{}", frame));
    auto ends = write_units(p, 5);
    std::int64_t start = frame == 0 ? 0 : ends[frame - 1];
    fs::resize_file(p, static_cast<std::uintmax_t>((start + ends[frame]) / 2));
    auto kept = static_cast<std::size_t>(std::max<std::int64_t>(frame - 2, 0));
    {
      Journal j = Journal::open(p, "job");
      JournalContents r = j.take_recovered();
      EXPECT_EQ(r.units.size(), kept);
      EXPECT_TRUE(r.damaged_copy.empty());
      j.append(test::sample_unit(100, 2));
    }
    JournalContents c = read_journal(p, "job");
    EXPECT_EQ(c.dropped_bytes, 0);
    ASSERT_EQ(c.units.size(), kept + 1);
    EXPECT_EQ(c.units.back().progress.unit, 100);
  }
}

// Issue 23: one flipped byte anywhere drops only the frame it is in; the units after it are kept
// (resynchronising on the next whole frame), the loss is counted, and reopening rewrites the
// journal with its intact frames, keeping the damaged file beside it.
TEST_F(JournalTest, DamagedFrameDropsOnlyItself) {
  struct Case {
    const char* name;
    int frame;   // 0, 1: header copies; 2..: units 0..
    int offset;  // byte within the frame (0..3 magic, 4..7 kind, 8..15 length, 16..23 checksum)
    int damaged_units;
  };
  const Case cases[] = {
      {"unit payload", 4, 30, 1},  {"unit magic", 4, 1, 1},     {"unit kind", 4, 5, 1},
      {"unit length", 4, 9, 1},    {"unit checksum", 4, 20, 1}, {"first header", 0, 30, 0},
      {"second header", 1, 26, 0}, {"last unit", 9, 40, 1},     {"first unit", 2, 3, 1}};
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    std::string p = path(k.name);
    auto ends = write_units(p, 8);
    std::int64_t start = k.frame == 0 ? 0 : ends[k.frame - 1];
    {
      std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(start + k.offset);
      char ch = static_cast<char>(f.get());
      f.seekp(start + k.offset);
      f.put(static_cast<char>(ch ^ 0x5a));
    }
    std::vector<std::int64_t> want;
    for (int u = 0; u < 8; ++u)
      if (u + 2 != k.frame) want.push_back(u);
    JournalContents c = read_journal(p, "job");
    std::vector<std::int64_t> got;
    for (const auto& u : c.units) got.push_back(u.progress.unit);
    EXPECT_EQ(got, want);
    EXPECT_EQ(c.damaged_frames, 1);
    EXPECT_EQ(c.damaged_units, k.damaged_units);
    EXPECT_EQ(c.dropped_bytes, ends[k.frame] - start);
    EXPECT_EQ(c.torn_bytes, 0);
    EXPECT_EQ(c.damage, fmt::format("bytes {}..{} (1 frame)", start, ends[k.frame]));
    EXPECT_NE(recovery_note(p, c).find(
                  fmt::format("kept {} unit(s); dropped 1 damaged frame", want.size())),
              std::string::npos)
        << recovery_note(p, c);
    {
      Journal j = Journal::open(p, "job");
      JournalContents r = j.take_recovered();
      EXPECT_EQ(r.units.size(), want.size());
      EXPECT_EQ(r.damaged_copy, p + ".damaged");
      EXPECT_EQ(fs::file_size(p + ".damaged"), static_cast<std::uintmax_t>(ends.back()));
      j.append(test::sample_unit(100, 1));
    }
    JournalContents again = read_journal(p, "job");
    EXPECT_EQ(again.dropped_bytes, 0);
    EXPECT_EQ(again.units.size(), want.size() + 1);
  }
}

// With both header copies damaged nobody can tell which job the units belong to: refused, exit 2,
// never recomputed silently. A journal of the first format (one header) is still read.
TEST_F(JournalTest, LostHeaderIsRefusedOldFormatIsRead) {
  std::string p = path("j");
  auto ends = write_units(p, 3);
  {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    for (std::int64_t at : {std::int64_t{30}, ends[0] + 30}) {
      f.seekp(at);
      f.put('\x01');
    }
  }
  std::string lost = "error: journal '" + p +
                     "' is damaged: its header (which names the job) is lost, so the 3 "
                     "frame(s) after it cannot be trusted; delete it to start the run over";
  EXPECT_EQ(expect_error([&] { read_journal(p, "job"); }), lost);
  EXPECT_EQ(expect_error([&] { Journal::open(p, "job"); }), lost);
  EXPECT_EQ(fs::file_size(p), static_cast<std::uintmax_t>(ends.back()))
      << "a refused open leaves the file alone";

  // Format 1: the same frames with one header whose version field says 1.
  std::string q = path("v1");
  write_units(q, 3);
  std::string bytes;
  {
    std::ifstream in(q, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::string header = bytes.substr(0, static_cast<std::size_t>(ends[0]));
  header[24] = 1;  // the payload's first field: the journal format version
  std::uint64_t sum = hash_bytes(header.substr(24), hash_bytes(header.substr(0, 16)));
  std::memcpy(header.data() + 16, &sum, 8);
  std::ofstream(q, std::ios::binary | std::ios::trunc)
      << header << bytes.substr(static_cast<std::size_t>(ends[1]));
  JournalContents c = read_journal(q, "job");
  EXPECT_EQ(c.units.size(), 3u);
  EXPECT_EQ(c.dropped_bytes, 0);
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
  EXPECT_EQ(dump_all(c.proofs),
            dump_all(std::vector{test::sample_proof(0), test::sample_proof(1)}));
}

TEST_F(JournalTest, Refusals) {
  std::string p = path("j");
  { Journal::open(p, "job-a").append(test::sample_unit(1, 1)); }
  std::string other = "error: journal '" + p +
                      "' belongs to a different job (job hash job-a, this job job-b); "
                      "use a new archive path or delete it";
  EXPECT_EQ(expect_error([&] { Journal::open(p, "job-b"); }), other);
  EXPECT_EQ(expect_error([&] { read_journal(p, "job-b"); }), other);
  EXPECT_EQ(read_journal(p, "job-a").units.size(), 1u);  // the refused open changed nothing

  Journal held = Journal::open(p, "job-a");
  EXPECT_EQ(expect_error([&] { Journal::open(p, "job-a"); }),
            "error: journal '" + p + "' is in use by another tilesweep process");

  std::string text = path("text"), tiny = path("tiny"), torn = path("torn"),
              missing = path("missing");
  std::ofstream(text) << "this is a job file, not a journal; long enough for a frame head";
  std::ofstream(tiny) << "ab";
  std::ofstream(torn) << "TS";  // a header frame cut after two bytes
  EXPECT_EQ(
      expect_error([&] { read_journal(text); }),
      "error: '" + text + "' is not a tilesweep journal: it does not start with a journal frame");
  EXPECT_EQ(
      expect_error([&] { Journal::open(text, "job"); }),
      "error: '" + text + "' is not a tilesweep journal: it does not start with a journal frame");
  EXPECT_EQ(fs::file_size(text), 63u) << "a refused open must leave the file alone";
  EXPECT_EQ(
      expect_error([&] { read_journal(tiny); }),
      "error: '" + tiny + "' is not a tilesweep journal: it does not start with a journal frame");
  EXPECT_EQ(read_journal(torn).dropped_bytes, 2);
  EXPECT_EQ(expect_error([&] { read_journal(missing); }),
            "error: cannot open journal '" + missing + "': No such file or directory");
}

}  // namespace
}  // namespace ts::store

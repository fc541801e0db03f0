// Crash safety for long sweeps: an append-only binary journal (`<archive>.journal`) of frames,
// one per completed work unit (plus proof frames and one header frame carrying the job hash).
// Each frame is written with one write() and made durable with fdatasync() before append()
// returns, so a SIGKILL at any moment loses at most the unit in flight; a torn last frame is
// detected by its length and checksum and dropped on reading.
//
// Frame (little-endian): magic "TSJ1" | kind u32 | payload length u64 | FNV-1a 64 checksum of
// the 16 bytes before it and the payload | payload. The format is documented in
// results/README.md.
//
// Unit ids are unique within a job: when a unit appears in several frames (a resumed run that
// redid a unit whose frame had already landed), the reader keeps the first frame and drops the
// rest, so reading then re-appending never duplicates a unit. Proofs are deduplicated by
// (kind, kernel, text), keeping the first.
//
// Not thread-safe: one Journal per file, used by one thread (the rank-0 writer).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tilesweep/store/schema.h"

namespace ts::store {

// The result of one completed work unit.
struct UnitResult {
  ProgressRecord progress;
  std::vector<CandidateRecord> candidates;
};

struct JournalContents {
  std::string job_hash;                // "" when not even the header frame is complete
  std::vector<UnitResult> units;       // file order, first frame per unit id
  std::vector<ProofRecord> proofs;     // file order, deduplicated
  std::int64_t frames = 0;             // complete frames read, header included
  std::int64_t valid_bytes = 0;        // length of the valid prefix
  std::int64_t dropped_bytes = 0;      // torn or corrupt tail after it, ignored
  std::int64_t duplicate_units = 0;    // unit frames dropped as repeats
};

// `archive_path + ".journal"`.
std::string journal_path(const std::string& archive_path);

// Reads the valid prefix of a journal; a torn or corrupt tail is counted in dropped_bytes, not
// an error. When `job_hash` is non-empty, a journal of another job is refused. Throws UserError
// for an unreadable file, a file that is not a tilesweep journal, a journal of another job
// ("... belongs to a different job; use a new archive path or delete it") or of another schema.
JournalContents read_journal(const std::string& path, std::string_view job_hash = {});

class Journal {
 public:
  // Opens `path` for appending, creating it (with its header frame) when missing or empty.
  // An existing journal must belong to `job_hash` (else UserError, as read_journal); its torn
  // tail, if any, is cut off so new frames follow the valid prefix. What it held is kept for
  // take_recovered().
  static Journal open(const std::string& path, std::string_view job_hash);

  Journal(Journal&& other) noexcept;
  Journal& operator=(Journal&& other) noexcept;
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  ~Journal();

  // Appends one durable frame. Throws UserError ("error: cannot write journal '<path>': ...")
  // when the write or the sync fails (disk full, I/O error).
  void append(const UnitResult& unit);
  void append_proofs(std::span<const ProofRecord> proofs);

  // The contents found when the journal was opened (empty for a new one); moves them out.
  JournalContents take_recovered() { return std::move(recovered_); }
  const std::string& path() const { return path_; }

 private:
  Journal(std::string path, int fd, JournalContents recovered);
  void write_frame(std::uint32_t kind, std::string_view payload);

  std::string path_;
  int fd_ = -1;
  std::int64_t size_ = 0;  // bytes of complete frames in the file
  JournalContents recovered_;
};

}  // namespace ts::store

// Crash safety for long sweeps: an append-only binary journal (`<archive>.journal`) of frames,
// one per completed work unit (plus proof frames and a header frame, written twice, carrying the
// job hash). Each frame is written with one write() and made durable with fdatasync() before
// append() returns, so a SIGKILL at any moment loses at most the unit in flight. A writer that
// records many units a second (rank 0 of a large run) stages them and commits the batch with one
// write() and one fdatasync() (group commit): a SIGKILL then loses the staged, uncommitted units,
// which a resume scores again. A torn last
// frame is detected by its length and checksum and dropped on reading. A frame damaged anywhere
// else (a flipped byte) is dropped too, and reading resynchronises on the next whole frame, so
// every intact unit is kept; what was dropped, and why, is counted in JournalContents.
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
  std::string job_hash;              // "" when not even the header frame is complete
  std::vector<UnitResult> units;     // file order, first frame per unit id
  std::vector<ProofRecord> proofs;   // file order, deduplicated
  std::int64_t frames = 0;           // complete frames read, header copies included
  std::int64_t valid_bytes = 0;      // end of the last complete frame
  std::int64_t dropped_bytes = 0;    // bytes in no complete frame (torn tail and damage), ignored
  std::int64_t duplicate_units = 0;  // unit frames dropped as repeats
  std::int64_t torn_bytes = 0;       // of dropped_bytes: a last frame cut short by a crash
  std::int64_t damaged_frames = 0;   // frames dropped as damaged (not the torn tail)
  std::int64_t damaged_units = 0;    // of which unit results (or frames whose kind is unreadable)
  std::string damage;                // where and why, e.g. "bytes 4096..4711 (1 frame)"; "" if none
  std::string damaged_copy;          // Journal::open: where the damaged file was kept ("" if not)
};

// What a resume should tell the user about the journal it read: the units kept, the frames
// dropped and why, where the damaged file was kept. "" when nothing was dropped.
std::string recovery_note(const std::string& path, const JournalContents& contents);

// `archive_path + ".journal"`.
std::string journal_path(const std::string& archive_path);

// Reads every complete frame of a journal; a torn tail or damaged frames are counted
// (dropped_bytes, torn_bytes, damaged_*), not an error. When `job_hash` is non-empty, a journal of
// another job is refused. Throws UserError for an unreadable file, a file that is not a tilesweep
// journal, a journal of another job ("... belongs to a different job; use a new archive path or
// delete it") or of another schema, and one whose every header copy is damaged while units follow
// (it cannot tell which job they belong to).
JournalContents read_journal(const std::string& path, std::string_view job_hash = {});

class Journal {
 public:
  // Opens `path` for appending, creating it (with its header frames) when missing or empty.
  // An existing journal must belong to `job_hash` (else UserError, as read_journal); its torn
  // tail, if any, is cut off so new frames follow valid ones. A journal with damaged frames is
  // rewritten (durably) with its intact frames only, the damaged file kept as `<path>.damaged`.
  // What it held is kept for take_recovered(); recovery_note() words what was dropped.
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

  // Group commit: stage() keeps a unit's frame in memory; commit() writes every staged frame
  // with one write() and makes them durable with one fdatasync() (nothing when none is staged).
  // append(u) is stage(u) then commit(). Throws like append(); on failure nothing staged is
  // kept, and the file is cut back to its last complete frame.
  void stage(const UnitResult& unit);
  void commit();
  std::size_t staged_units() const { return staged_units_; }

  // The contents found when the journal was opened (empty for a new one); moves them out.
  JournalContents take_recovered() { return std::move(recovered_); }
  const std::string& path() const { return path_; }

 private:
  Journal(std::string path, int fd, JournalContents recovered);
  void write_frame(std::uint32_t kind, std::string_view payload);
  void write_bytes(std::string_view frames);

  std::string path_;
  int fd_ = -1;
  std::int64_t size_ = 0;  // bytes of complete frames in the file
  std::string staged_;     // frames staged since the last commit
  std::size_t staged_units_ = 0;
  JournalContents recovered_;
};

}  // namespace ts::store

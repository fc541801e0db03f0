// The HDF5 archive of one job: /meta (attributes) and the /candidates, /best, /proofs and
// /progress tables (chunked, shuffle+deflate compressed compound datasets). The layout is
// documented in results/README.md.
//
// Text columns are fixed-length, NUL-padded UTF-8 fields as wide as the column's longest value
// (chosen at write time), so nothing is ever truncated and repeated values compress well; /meta
// strings are fixed-length too. Nothing is variable-length: such text lives in HDF5's global heap,
// which nothing checksums (older archives' variable-length text is still read). A string holding
// a NUL byte cannot be stored and is refused.
//
// Integrity: the file uses HDF5's newest format (its metadata carries checksums), every table
// has the Fletcher32 filter and a checksum of its values (attribute "checksum"), and /meta a
// checksum per attribute ("checksums"). A file that fails any of them is refused as damaged.
// Archives of an older tilesweep carry none of these and are read unchecked.
//
// Not thread-safe: Debian's serial HDF5 is not; call the store from one thread at a time.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "tilesweep/store/schema.h"

namespace ts::store {

struct Archive {
  Meta meta;
  std::vector<CandidateRecord> candidates;
  std::vector<BestRecord> best;
  std::vector<ProofRecord> proofs;
  std::vector<ProgressRecord> progress;
};

// Writes the archive atomically: HDF5 builds it in memory, and write_file_durably
// (base/durable_file.h) puts it on disk through a temporary in the same folder, synced and
// renamed over `path` only when complete, so a crash or a full disk never leaves a half-written
// archive under the real name (an existing archive at `path` stays intact until the rename).
// Rows are written in the order given (callers sort them by a stable key first).
// Throws UserError ("error: cannot write archive '<path>': ...") when the file cannot be
// written (HDF5's message, or the system's, e.g. "No space left on device").
void write_archive(const std::string& path, const Meta& meta,
                   std::span<const CandidateRecord> candidates, std::span<const BestRecord> best,
                   std::span<const ProofRecord> proofs, std::span<const ProgressRecord> progress);
void write_archive(const std::string& path, const Archive& archive);

// Reads a whole archive. An archive of an older schema (kOldestReadableSchema ..) is upgraded in
// memory: the columns it lacks take the values results/README.md gives, and meta.schema_version
// becomes kSchemaVersion (read_meta reports the file's own). Throws UserError naming the path:
//   "error: cannot open archive '<path>': <strerror>"            missing or unreadable
//   "error: not a tilesweep archive: '<path>' ..."                not HDF5, no /meta, a missing
//                                                                 table or column, a schema it
//                                                                 cannot read
//   "error: truncated or corrupt HDF5 file: '<path>' (<hdf5>)"   HDF5 cannot read it
//   "error: damaged archive '<path>': <part>: ..."               a checksum fails (HDF5's or ours),
//                                                                naming /meta, its attribute or the
//                                                                table
Archive read_archive(const std::string& path);

// Reads /meta only (cheap: no table is touched). Same errors as read_archive.
Meta read_meta(const std::string& path);

}  // namespace ts::store

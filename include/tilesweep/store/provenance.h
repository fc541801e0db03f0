// Provenance of a merged archive (`tilesweep merge`): which archive each row came from. A merged
// archive is an ordinary archive (schema version 1) plus two optional tables, documented in
// results/README.md:
//   /sources      one row per source archive: its path, job and tool, and the row ranges of
//                 /candidates, /proofs and /progress that came from it (sources are contiguous)
//   /best_origin  one row per /best row: its key and the index of the source it came from
// An archive written by `run` has neither table; read_provenance then describes the archive
// itself as its only source, so callers treat plain and merged archives alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tilesweep/store/archive.h"

namespace ts::store {

// One source archive of a merge: a row of /sources.
struct SourceRecord {
  std::string path;  // the archive as named on merge's command line
  std::string job_name;
  std::string job_hash;
  std::string tool_version;
  std::string git_commit;
  std::string job_toml;  // the job's text (re-materializing a candidate needs its search options)
  std::int64_t candidates_first = 0, candidates_count = 0;
  std::int64_t proofs_first = 0, proofs_count = 0;
  std::int64_t progress_first = 0, progress_count = 0;
};

// Which source a /best row came from: a row of /best_origin.
struct OriginRecord {
  std::string kernel;
  std::string target;
  std::string shape;
  std::string mesh = "1";
  std::int32_t source = 0;  // row of /sources
};

struct Provenance {
  std::vector<SourceRecord> sources;
  std::vector<OriginRecord> best_origin;  // one per /best row, same order
};

// Writes an archive with provenance tables, atomically (as write_archive). Same errors.
void write_archive(const std::string& path, const Archive& archive, const Provenance& provenance);

// The provenance of the archive at `path`: its /sources and /best_origin tables, or, for an
// archive without them, the archive itself as the one source of every row (path as given).
// Same errors as read_archive.
Provenance read_provenance(const std::string& path, const Archive& archive);

}  // namespace ts::store

// The shape library (`tilesweep select`): the best entry per (kernel, target, shape, mesh) over
// any number of archives (plain or merged), with its provenance and NKI source. The NKI source
// is re-materialized from what the archive records: the job text (search options), the kernel
// sources and the target description; when that fails (the target text differs from this
// tilesweep's, the candidate index no longer decodes to the recorded config, a mesh entry, ...)
// the entry carries the reason instead. Never throws for one entry's failure.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tilesweep/lower/nki.h"
#include "tilesweep/store/library.h"
#include "tilesweep/store/provenance.h"

namespace ts::report {

// One archive read for analysis: its tables and where each /best row came from.
struct LoadedArchive {
  std::string path;
  store::Archive archive;
  store::Provenance provenance;
};

// read_archive + read_provenance; their UserErrors.
LoadedArchive load_archive(const std::string& path);

struct NkiResult {
  std::string source;  // NKI source, "" on failure
  std::string error;   // why not, "" on success
};

// Re-materializes /best rows as NKI source, preparing each (job, kernel, target) once.
// Not thread-safe.
class NkiEmitter {
 public:
  NkiEmitter();
  ~NkiEmitter();
  NkiEmitter(const NkiEmitter&) = delete;
  NkiEmitter& operator=(const NkiEmitter&) = delete;

  // With `generic`, the kernel is generic in the shape as `lower --nki-shapes generic` makes it
  // (a mesh entry's per-device kernel stays at its local shape).
  NkiResult emit(const store::Meta& meta, const store::SourceRecord& source,
                 const store::BestRecord& best, lower::NkiApi api = lower::NkiApi::Current,
                 bool generic = true);

  // The recorded candidate re-lowered at another single-device shape `dims`: the same variant,
  // fusion form, lowerings, engines, buffering, instruction fusion and tiles, re-checked for
  // capacity and simulated. Refused (error says why) where a tile does not divide its group's
  // extent at `dims`, the configuration has no program there, its instruction sequence differs
  // from the recorded one, or it does not fit.
  // With `generic`, where the configuration cannot be lowered at `dims` (its tiles do not divide
  // them) the entry's own generic kernel is handed out when it takes `dims` (partial last tiles
  // or the multiples it asserts); `note` then says so and `latency_ns` is the entry's shape's.
  struct Reinstance {
    std::string source, error;
    double latency_ns = 0;
    std::string note;  // set when the entry's own generic kernel is given
  };
  Reinstance reinstantiate(const store::Meta& meta, const store::SourceRecord& source,
                           const store::BestRecord& best, const sem::DimEnv& dims,
                           lower::NkiApi api = lower::NkiApi::Current, bool generic = true);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct SelectOptions {
  bool emit_nki = true;
  lower::NkiApi nki_api = lower::NkiApi::Current;
  bool nki_generic = true;  // NkiEmitter::emit's `generic`
  std::string tool_version;
  // Told what select is doing as it goes (one line per archive read and per entry re-built).
  std::function<void(const std::string&)> progress;
};

// Keeps the lowest-latency row per key over `paths` (ties to the first archive given, then the
// first row); rows without a latency (no feasible candidate) are left out. Entries sorted by key.
store::Library select_library(const std::vector<std::string>& paths, const SelectOptions& options);

}  // namespace ts::report

// The shape library (`tilesweep select`): the best known program per (kernel, target, shape,
// mesh) over one or more archives, with its provenance and NKI source. An HDF5 file:
//   /meta     attributes: format = "tilesweep-library", schema_version (2; version 1, before
//             meshes, lacks `sharding` and is still read, as ""), tool_version,
//             archives (string[n]: the archives it was selected from, as named)
//   /entries  table, one row per entry, sorted by (kernel, target, shape, mesh); columns as
//             LibraryEntry below, text columns as in archives (fixed-length; older libraries'
//             variable-length ones still read), checksums as in archives (archive.h)
// results/README.md documents it; include/tilesweep/store/library_reader.h reads it without
// linking tilesweep. Not thread-safe (serial HDF5).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tilesweep/store/schema.h"

namespace ts::store {

inline constexpr int kLibrarySchemaVersion = 2;  // 2: sharding

struct LibraryEntry {
  std::string kernel;
  std::string target;
  std::string shape;
  std::string mesh = "1";
  std::string sharding;  // how the entry splits the kernel over the mesh ("" on one device); config
                         // is per device
  std::int32_t variant = 0;
  std::int64_t choice = 0;
  std::int64_t index = 0;
  std::string config;
  double latency_ns = kNotComputed;
  double roofline_ns = kNotComputed;
  double roofline_pct = kNotComputed;  // 100 * roofline_ns / latency_ns
  double heuristic_ns = kNotComputed;
  std::string archive;  // the archive the entry came from (a merged archive's source)
  std::string job_name;
  std::string tool_version;  // tilesweep that wrote that archive
  std::string nki;           // NKI source ("" when it could not be emitted)
  std::string nki_error;     // why not ("" when nki is set)
};

struct Library {
  std::string tool_version;           // tilesweep that selected it
  std::vector<std::string> archives;  // selected from
  std::vector<LibraryEntry> entries;
  std::int64_t schema_version = kLibrarySchemaVersion;
};

// Atomic and durable like write_archive. Throws UserError ("error: cannot write library '<path>':
// ...").
void write_library(const std::string& path, const Library& library);

// Throws UserError: "error: cannot open library '<path>': ...", "error: not a tilesweep shape
// library: '<path>' ..." (not HDF5, no /meta format, other schema version, no /entries),
// "error: truncated or corrupt HDF5 file: '<path>' (...)", "error: damaged library '<path>':
// <part>: ..." (a checksum fails: the NKI source it would print cannot be trusted).
Library read_library(const std::string& path);

}  // namespace ts::store

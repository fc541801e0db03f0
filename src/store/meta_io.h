// /meta: the archive's provenance as attributes of one group (internal to the store).
#pragma once

#include "hdf5_handle.h"
#include "tilesweep/store/schema.h"

namespace ts::store::detail {

// The value of /meta's "format" attribute, which marks a file as a tilesweep archive.
inline constexpr const char* kArchiveFormat = "tilesweep-archive";

void write_meta(const Hdf5& h, hid_t file, const Meta& meta);

// Throws LayoutError when the file has no /meta, no "format" attribute of kArchiveFormat or no
// "schema_version" (the caller checks the version's value), Hdf5Error when HDF5 fails.
Meta read_meta(const Hdf5& h, hid_t file);

}  // namespace ts::store::detail

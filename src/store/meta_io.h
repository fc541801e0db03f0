// /meta: the archive's provenance as attributes of one group (internal to the store).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hdf5_handle.h"
#include "tilesweep/store/schema.h"

namespace ts::store::detail {

// The value of /meta's "format" attribute, which marks a file as a tilesweep archive.
inline constexpr const char* kArchiveFormat = "tilesweep-archive";

void write_meta(const Hdf5& h, hid_t file, const Meta& meta);

// Throws LayoutError when the file has no /meta, no "format" attribute of kArchiveFormat or no
// "schema_version" (the caller checks the version's value), Hdf5Error when HDF5 fails.
Meta read_meta(const Hdf5& h, hid_t file);

// Single attributes, for the other HDF5 files of the store (the shape library). The readers
// throw Hdf5Error when the attribute is missing or of another shape.
void write_text_attr(const Hdf5& h, hid_t obj, const char* name, const std::string& value);
void write_texts_attr(const Hdf5& h, hid_t obj, const char* name, const std::vector<std::string>& values);
void write_i64_attr(const Hdf5& h, hid_t obj, const char* name, std::int64_t value);
std::string read_text_attr(const Hdf5& h, hid_t obj, const char* name);
std::vector<std::string> read_texts_attr(const Hdf5& h, hid_t obj, const char* name);
std::int64_t read_i64_attr(const Hdf5& h, hid_t obj, const char* name);

}  // namespace ts::store::detail

// One record type <-> one chunked, compressed compound dataset under the file root (internal to
// the store). Column layout comes from columns.h; strings are fixed-width fields as wide as the
// longest value of the column, so nothing is truncated.
#pragma once

#include <span>
#include <stdexcept>
#include <vector>

#include "hdf5_handle.h"
#include "tilesweep/store/schema.h"

namespace ts::store::detail {

// The file is HDF5 but its layout is not a tilesweep table (a missing dataset or column, a
// column of the wrong kind). The archive layer reports it as "not a tilesweep archive".
class LayoutError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The attribute of each table holding the checksum of its rows (digest.h).
inline constexpr const char* kChecksumAttr = "checksum";

// Writes `rows` as /<Table<Rec>::name>: chunked, shuffled, deflated and Fletcher32-checked (text
// fixed-width, so all of it is in the checked chunks), with the checksum of its values as
// attribute kChecksumAttr. Throws Hdf5Error (also for a string holding a NUL byte).
template <class Rec>
void write_table(const Hdf5& h, hid_t file, std::span<const Rec> rows);

// Reads /<Table<Rec>::name> of a file of schema `version`: a column added after it (Column::since)
// may be missing and then keeps its default. A table with a checksum attribute is checked against
// it; `checksummed`: the table must have one (the file's /meta says its tables do). Throws
// LayoutError, Hdf5Error, or DamageError (digest.h) when the rows do not match their checksum.
template <class Rec>
std::vector<Rec> read_table(const Hdf5& h, hid_t file, int version = kSchemaVersion,
                            bool checksummed = false);

}  // namespace ts::store::detail

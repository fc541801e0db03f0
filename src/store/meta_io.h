// /meta: the archive's provenance as attributes of one group (internal to the store).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hdf5_handle.h"
#include "tilesweep/store/schema.h"

namespace ts::store::detail {

// The value of /meta's "format" attribute, which marks a file as a tilesweep archive.
inline constexpr const char* kArchiveFormat = "tilesweep-archive";
// The attribute beside the others holding "<name> <checksum>" per attribute (digest.h).
inline constexpr const char* kChecksumsAttr = "checksums";

// Writes the attributes of one HDF5 object, remembering each value's checksum; finish() stores
// them as kChecksumsAttr. Throws Hdf5Error.
class AttrWriter {
 public:
  AttrWriter(const Hdf5& h, hid_t obj);
  void text(const char* name, const std::string& value);
  void texts(const char* name, const std::vector<std::string>& values);
  void i64(const char* name, std::int64_t value);
  void numbers(const char* name, const std::vector<double>& values);
  void finish();

 private:
  const Hdf5& h_;
  hid_t obj_;
  std::vector<std::string> sums_;
};

// Reads attributes, each checked against kChecksumsAttr when the object has it (an older file's
// has none and is read unchecked). Throws Hdf5Error when an attribute is missing or of another
// shape, DamageError (digest.h) naming the attribute when its value does not match.
class AttrReader {
 public:
  AttrReader(const Hdf5& h, hid_t obj, std::string where);  // where: "/meta", for messages
  bool checked() const { return checked_; }
  const std::string& path() const { return h_.path(); }
  std::string text(const char* name) const;
  std::vector<std::string> texts(const char* name) const;
  std::int64_t i64(const char* name) const;
  std::vector<double> numbers(const char* name) const;

 private:
  void check(const char* name, const std::string& sum) const;
  const Hdf5& h_;
  hid_t obj_;
  std::string where_;
  bool checked_ = false;
  std::map<std::string, std::string> sums_;
};

// One text attribute, unchecked (a table's checksum itself).
void write_text_attr(const Hdf5& h, hid_t obj, const char* name, const std::string& value);
std::string read_text_attr(const Hdf5& h, hid_t obj, const char* name);

void write_meta(const Hdf5& h, hid_t file, const Meta& meta);

// /meta as read; `checksummed`: the file carries checksums, so every table must have one too.
struct MetaRead {
  Meta meta;
  bool checksummed = false;
};

// Throws LayoutError when the file has no /meta, no "format" attribute of kArchiveFormat or no
// "schema_version" (the caller checks the version's value), Hdf5Error when HDF5 fails,
// DamageError when an attribute does not match its checksum.
MetaRead read_meta(const Hdf5& h, hid_t file);

}  // namespace ts::store::detail

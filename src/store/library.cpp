#include "tilesweep/store/library.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "hdf5_handle.h"
#include "meta_io.h"
#include "posix_io.h"
#include "table_io.h"
#include "tilesweep/base/error.h"

namespace ts::store {
namespace {

using detail::Handle;
using detail::Hdf5;
using detail::Hdf5Error;
using detail::LayoutError;

constexpr const char* kLibraryFormat = "tilesweep-library";

void write_file(const Hdf5& h, const Library& lib) {
  Handle file = h.own(H5Fcreate(h.path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose,
                      "create file");
  Handle g = h.own(H5Gcreate2(file, "meta", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose, "create /meta");
  detail::write_text_attr(h, g, "format", kLibraryFormat);
  detail::write_i64_attr(h, g, "schema_version", lib.schema_version);
  detail::write_text_attr(h, g, "tool_version", lib.tool_version);
  detail::write_texts_attr(h, g, "archives", lib.archives);
  g = Handle();
  detail::write_table<LibraryEntry>(h, file, lib.entries);
  h.ok(H5Fflush(file, H5F_SCOPE_GLOBAL), "flush file");
  h.ok(file.close(), "close file");
}

[[noreturn]] void cannot_write(const std::string& path, const std::string& why) {
  throw UserError(fmt::format("error: cannot write library '{}': {}", path, why));
}

[[noreturn]] void not_library(const std::string& path, const std::string& what) {
  throw UserError(fmt::format("error: not a tilesweep shape library: '{}' {}", path, what));
}

Library read_file(const Hdf5& h, hid_t file) {
  if (!h.yes(H5Lexists(file, "meta", H5P_DEFAULT), "look for /meta")) throw LayoutError("has no /meta group");
  Handle g = h.own(H5Gopen2(file, "meta", H5P_DEFAULT), H5Gclose, "open /meta");
  if (!h.yes(H5Aexists(g, "format"), "look for /meta format") ||
      detail::read_text_attr(h, g, "format") != kLibraryFormat)
    throw LayoutError(fmt::format("has no /meta attribute format = \"{}\"", kLibraryFormat));
  Library lib;
  lib.schema_version = detail::read_i64_attr(h, g, "schema_version");
  if (lib.schema_version < 1 || lib.schema_version > kLibrarySchemaVersion)
    throw LayoutError(fmt::format("has schema version {} (this tilesweep reads versions 1 to {})", lib.schema_version,
                                  kLibrarySchemaVersion));
  lib.tool_version = detail::read_text_attr(h, g, "tool_version");
  lib.archives = detail::read_texts_attr(h, g, "archives");
  lib.entries = detail::read_table<LibraryEntry>(h, file, static_cast<int>(lib.schema_version));
  lib.schema_version = kLibrarySchemaVersion;  // upgraded in memory: a version-1 entry's sharding is ""
  return lib;
}

}  // namespace

void write_library(const std::string& path, const Library& lib) {
  const std::string tmp = path + ".tmp";
  Hdf5 h(tmp);
  try {
    write_file(h, lib);
  } catch (const Hdf5Error& e) {
    std::remove(tmp.c_str());
    cannot_write(path, e.detail());
  }
  if (std::string why = detail::publish(tmp, path); !why.empty()) cannot_write(path, why);
}

Library read_library(const std::string& path) {
  Hdf5 h(path);
  if (::access(path.c_str(), R_OK) != 0)
    throw UserError(fmt::format("error: cannot open library '{}': {}", path, std::strerror(errno)));
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    detail::take_error_stack();
    not_library(path, "is not an HDF5 file");
  }
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0)
    throw UserError(fmt::format("error: truncated or corrupt HDF5 file: '{}' (open: {})", path,
                                detail::take_error_stack()));
  Handle file(id, H5Fclose);
  try {
    return read_file(h, file);
  } catch (const LayoutError& e) {
    not_library(path, e.what());
  } catch (const Hdf5Error& e) {
    throw UserError(fmt::format("error: truncated or corrupt HDF5 file: '{}' ({})", path, e.detail()));
  }
}

}  // namespace ts::store

#include "tilesweep/store/library.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "digest.h"
#include "hdf5_handle.h"
#include "meta_io.h"
#include "table_io.h"
#include "tilesweep/base/durable_file.h"
#include "tilesweep/base/error.h"

namespace ts::store {
namespace {

using detail::DamageError;
using detail::Handle;
using detail::Hdf5;
using detail::Hdf5Error;
using detail::LayoutError;

constexpr const char* kLibraryFormat = "tilesweep-library";

// The library's file image, built in memory (as archives are: see archive.cpp).
std::string library_image(const Hdf5& h, const Library& lib) {
  Handle file = detail::create_in_memory(h);
  Handle g = h.own(H5Gcreate2(file, "meta", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                   "create /meta");
  detail::AttrWriter w(h, g);
  w.text("format", kLibraryFormat);
  w.i64("schema_version", lib.schema_version);
  w.text("tool_version", lib.tool_version);
  w.texts("archives", lib.archives);
  w.finish();
  g = Handle();
  detail::write_table<LibraryEntry>(h, file, lib.entries);
  return detail::file_image(h, file);
}

[[noreturn]] void not_library(const std::string& path, const std::string& what) {
  throw UserError(fmt::format("error: not a tilesweep shape library: '{}' {}", path, what));
}

[[noreturn]] void damaged(const std::string& path, const std::string& what) {
  throw UserError(fmt::format(
      "error: damaged library '{}': {}; it cannot be trusted: restore it from a copy or "
      "select it again",
      path, what));
}

Library read_file(const Hdf5& h, hid_t file) {
  if (!h.yes(H5Lexists(file, "meta", H5P_DEFAULT), "look for /meta"))
    throw LayoutError("has no /meta group");
  Handle g = h.own(H5Gopen2(file, "meta", H5P_DEFAULT), H5Gclose, "open /meta");
  detail::AttrReader r(h, g, "/meta");
  if (!h.yes(H5Aexists(g, "format"), "look for /meta format") || r.text("format") != kLibraryFormat)
    throw LayoutError(fmt::format("has no /meta attribute format = \"{}\"", kLibraryFormat));
  Library lib;
  lib.schema_version = r.i64("schema_version");
  if (lib.schema_version < 1 || lib.schema_version > kLibrarySchemaVersion)
    throw LayoutError(fmt::format("has schema version {} (this tilesweep reads versions 1 to {})",
                                  lib.schema_version, kLibrarySchemaVersion));
  lib.tool_version = r.text("tool_version");
  lib.archives = r.texts("archives");
  lib.entries =
      detail::read_table<LibraryEntry>(h, file, static_cast<int>(lib.schema_version), r.checked());
  lib.schema_version =
      kLibrarySchemaVersion;  // upgraded in memory: a version-1 entry's sharding is ""
  return lib;
}

}  // namespace

void write_library(const std::string& path, const Library& lib) {
  Hdf5 h(path);
  std::string image;
  try {
    image = library_image(h, lib);
  } catch (const Hdf5Error& e) {
    throw UserError(fmt::format("error: cannot write library '{}': {}", path, e.detail()));
  }
  write_file_durably(path, image, "library");
}

Library read_library(const std::string& path) {
  Hdf5 h(path);
  if (::access(path.c_str(), R_OK) != 0)
    throw UserError(fmt::format("error: cannot open library '{}': {}", path, std::strerror(errno)));
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    detail::take_error_stack();
    not_library(path, "is not an HDF5 file");
  }
  Handle fapl = detail::file_access(h);
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl);
  if (id < 0) {
    std::string why = "open: " + detail::take_error_stack();
    if (why.find("checksum") != std::string::npos) damaged(path, why);
    throw UserError(fmt::format("error: truncated or corrupt HDF5 file: '{}' ({})", path, why));
  }
  Handle file(id, H5Fclose);
  try {
    return read_file(h, file);
  } catch (const LayoutError& e) {
    not_library(path, e.what());
  } catch (const Hdf5Error& e) {
    if (e.detail().find("checksum") != std::string::npos) damaged(path, e.detail());
    throw UserError(
        fmt::format("error: truncated or corrupt HDF5 file: '{}' ({})", path, e.detail()));
  } catch (const DamageError& e) {
    damaged(path, e.what());
  }
}

}  // namespace ts::store

#include "meta_io.h"

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "table_io.h"

namespace ts::store::detail {
namespace {

Handle text_type(const Hdf5& h) {
  Handle t = h.own(H5Tcopy(H5T_C_S1), H5Tclose, "copy string type");
  h.ok(H5Tset_size(t, H5T_VARIABLE), "make string type variable");
  h.ok(H5Tset_cset(t, H5T_CSET_UTF8), "set string charset");
  return t;
}

// Attributes are one-dimensional arrays (n may be 0) or scalars (n < 0).
Handle make_space(const Hdf5& h, long n) {
  if (n < 0) return h.own(H5Screate(H5S_SCALAR), H5Sclose, "create scalar dataspace");
  hsize_t dim = static_cast<hsize_t>(n);
  return h.own(H5Screate_simple(1, &dim, nullptr), H5Sclose, "create dataspace");
}

void put_attr(const Hdf5& h, hid_t obj, const char* name, hid_t type, long n, const void* data) {
  Handle space = make_space(h, n);
  Handle a = h.own(H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                   fmt::format("create attribute '{}'", name));
  if (n != 0) h.ok(H5Awrite(a, type, data), fmt::format("write attribute '{}'", name));
}

// Variable-length strings end at a NUL byte, so one inside a string is refused.
void put_texts(const Hdf5& h, hid_t obj, const char* name, const std::vector<std::string>& v,
               bool scalar = false) {
  std::vector<const char*> ptrs;
  for (const auto& s : v) {
    if (s.find('\0') != std::string::npos)
      throw Hdf5Error(h.path(), fmt::format("/meta attribute '{}' holds a NUL byte, which an "
                                            "HDF5 string cannot store", name));
    ptrs.push_back(s.c_str());
  }
  Handle t = text_type(h);
  put_attr(h, obj, name, t, scalar ? -1 : static_cast<long>(v.size()), ptrs.data());
}

void put_text(const Hdf5& h, hid_t obj, const char* name, const std::string& s) {
  put_texts(h, obj, name, {s}, true);
}

void put_i64(const Hdf5& h, hid_t obj, const char* name, std::int64_t v) {
  put_attr(h, obj, name, H5T_NATIVE_INT64, -1, &v);
}

template <class V>
void put_map(const Hdf5& h, hid_t obj, const char* keys_name, const char* values_name,
             const std::map<std::string, V>& m) {
  std::vector<std::string> keys;
  std::vector<V> values;
  for (const auto& [k, v] : m) {
    keys.push_back(k);
    values.push_back(v);
  }
  put_texts(h, obj, keys_name, keys);
  if constexpr (std::is_same_v<V, std::string>) {
    put_texts(h, obj, values_name, values);
  } else {
    put_attr(h, obj, values_name, H5T_NATIVE_DOUBLE, static_cast<long>(values.size()), values.data());
  }
}

}  // namespace

void write_meta(const Hdf5& h, hid_t file, const Meta& m) {
  Handle g = h.own(H5Gcreate2(file, "meta", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                   "create /meta");
  put_text(h, g, "format", kArchiveFormat);
  put_i64(h, g, "schema_version", m.schema_version);
  put_text(h, g, "tool_version", m.tool_version);
  put_text(h, g, "git_commit", m.git_commit);
  put_text(h, g, "job_name", m.job_name);
  put_text(h, g, "job_toml", m.job_toml);
  put_text(h, g, "job_hash", m.job_hash);
  put_map(h, g, "target_names", "target_texts", m.targets);
  put_map(h, g, "kernel_files", "kernel_sources", m.kernel_sources);
  put_i64(h, g, "ranks", m.ranks);
  put_i64(h, g, "threads", m.threads);
  put_text(h, g, "start_time", m.start_time);
  put_text(h, g, "end_time", m.end_time);
  put_map(h, g, "phase_names", "phase_seconds", m.phase_seconds);
  put_text(h, g, "status", m.status);
}

namespace {

struct Attr {
  Handle id;
  Handle space;
  hssize_t n = 0;  // elements
};

Attr open_attr(const Hdf5& h, hid_t obj, const char* name) {
  if (!h.yes(H5Aexists(obj, name), fmt::format("look for attribute '{}'", name)))
    throw Hdf5Error(h.path(), fmt::format("/meta has no attribute '{}'", name));
  Attr a;
  a.id = h.own(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose, fmt::format("open attribute '{}'", name));
  a.space = h.own(H5Aget_space(a.id), H5Sclose, "get attribute dataspace");
  a.n = H5Sget_simple_extent_npoints(a.space);
  if (a.n < 0) h.fail(fmt::format("size attribute '{}'", name));
  return a;
}

std::vector<std::string> get_texts(const Hdf5& h, hid_t obj, const char* name) {
  Attr a = open_attr(h, obj, name);
  Handle t = text_type(h);
  std::vector<char*> ptrs(static_cast<std::size_t>(a.n), nullptr);
  if (ptrs.empty()) return {};
  h.ok(H5Aread(a.id, t, ptrs.data()), fmt::format("read attribute '{}'", name));
  std::vector<std::string> out;
  for (char* p : ptrs) out.emplace_back(p ? p : "");
  H5Dvlen_reclaim(t, a.space, H5P_DEFAULT, ptrs.data());
  return out;
}

std::string get_text(const Hdf5& h, hid_t obj, const char* name) {
  auto v = get_texts(h, obj, name);
  if (v.size() != 1) throw Hdf5Error(h.path(), fmt::format("/meta attribute '{}' is not one string", name));
  return v[0];
}

template <class V>
std::vector<V> get_numbers(const Hdf5& h, hid_t obj, const char* name, hid_t type) {
  Attr a = open_attr(h, obj, name);
  std::vector<V> out(static_cast<std::size_t>(a.n));
  if (!out.empty()) h.ok(H5Aread(a.id, type, out.data()), fmt::format("read attribute '{}'", name));
  return out;
}

std::int64_t get_i64(const Hdf5& h, hid_t obj, const char* name) {
  auto v = get_numbers<std::int64_t>(h, obj, name, H5T_NATIVE_INT64);
  if (v.size() != 1) throw Hdf5Error(h.path(), fmt::format("/meta attribute '{}' is not one number", name));
  return v[0];
}

template <class V>
std::map<std::string, V> get_map(const Hdf5& h, hid_t obj, const char* keys_name,
                                 const char* values_name) {
  auto keys = get_texts(h, obj, keys_name);
  std::vector<V> values;
  if constexpr (std::is_same_v<V, std::string>) {
    values = get_texts(h, obj, values_name);
  } else {
    values = get_numbers<V>(h, obj, values_name, H5T_NATIVE_DOUBLE);
  }
  if (keys.size() != values.size())
    throw Hdf5Error(h.path(), fmt::format("/meta attributes '{}' and '{}' differ in length",
                                          keys_name, values_name));
  std::map<std::string, V> m;
  for (std::size_t i = 0; i < keys.size(); ++i) m.emplace(keys[i], values[i]);
  return m;
}

// The marks of a tilesweep archive; anything else is another kind of HDF5 file.
Handle open_meta_group(const Hdf5& h, hid_t file) {
  if (!h.yes(H5Lexists(file, "meta", H5P_DEFAULT), "look for /meta"))
    throw LayoutError("has no /meta group");
  Handle g = h.own(H5Gopen2(file, "meta", H5P_DEFAULT), H5Gclose, "open /meta");
  if (!h.yes(H5Aexists(g, "format"), "look for /meta format") || get_text(h, g, "format") != kArchiveFormat)
    throw LayoutError(fmt::format("has no /meta attribute format = \"{}\"", kArchiveFormat));
  if (!h.yes(H5Aexists(g, "schema_version"), "look for /meta schema_version"))
    throw LayoutError("has no /meta attribute schema_version");
  return g;
}

}  // namespace

Meta read_meta(const Hdf5& h, hid_t file) {
  Handle g = open_meta_group(h, file);
  Meta m;
  m.schema_version = get_i64(h, g, "schema_version");
  if (m.schema_version < kOldestReadableSchema || m.schema_version > kSchemaVersion) return m;  // the caller refuses it
  m.tool_version = get_text(h, g, "tool_version");
  m.git_commit = get_text(h, g, "git_commit");
  m.job_name = get_text(h, g, "job_name");
  m.job_toml = get_text(h, g, "job_toml");
  m.job_hash = get_text(h, g, "job_hash");
  m.targets = get_map<std::string>(h, g, "target_names", "target_texts");
  m.kernel_sources = get_map<std::string>(h, g, "kernel_files", "kernel_sources");
  m.ranks = get_i64(h, g, "ranks");
  m.threads = get_i64(h, g, "threads");
  m.start_time = get_text(h, g, "start_time");
  m.end_time = get_text(h, g, "end_time");
  m.phase_seconds = get_map<double>(h, g, "phase_names", "phase_seconds");
  m.status = get_text(h, g, "status");
  return m;
}

void write_text_attr(const Hdf5& h, hid_t obj, const char* name, const std::string& value) {
  put_text(h, obj, name, value);
}
void write_texts_attr(const Hdf5& h, hid_t obj, const char* name, const std::vector<std::string>& values) {
  put_texts(h, obj, name, values);
}
void write_i64_attr(const Hdf5& h, hid_t obj, const char* name, std::int64_t value) { put_i64(h, obj, name, value); }
std::string read_text_attr(const Hdf5& h, hid_t obj, const char* name) { return get_text(h, obj, name); }
std::vector<std::string> read_texts_attr(const Hdf5& h, hid_t obj, const char* name) {
  return get_texts(h, obj, name);
}
std::int64_t read_i64_attr(const Hdf5& h, hid_t obj, const char* name) { return get_i64(h, obj, name); }

}  // namespace ts::store::detail

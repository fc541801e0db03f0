#include "meta_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "digest.h"
#include "table_io.h"

namespace ts::store::detail {
namespace {

// Texts are fixed-width (as wide as the longest, NUL-padded): they then live in the object
// header or the attribute heap, which HDF5 checksums, never in its unchecked global heap, whose
// damage can crash HDF5 itself. An older file's variable-length texts are still read.
Handle text_type(const Hdf5& h, std::size_t width) {
  Handle t = h.own(H5Tcopy(H5T_C_S1), H5Tclose, "copy string type");
  h.ok(H5Tset_size(t, width == 0 ? H5T_VARIABLE : width), "set string size");
  h.ok(H5Tset_strpad(t, H5T_STR_NULLPAD), "set string padding");
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

// A NUL byte would end a text early on reading, so one inside a string is refused.
void put_texts(const Hdf5& h, hid_t obj, const char* name, const std::vector<std::string>& v,
               bool scalar) {
  std::size_t width = 1;
  for (const auto& s : v) {
    if (s.find('\0') != std::string::npos)
      throw Hdf5Error(h.path(), fmt::format("/meta attribute '{}' holds a NUL byte, which an "
                                            "HDF5 string cannot store",
                                            name));
    width = std::max(width, s.size());
  }
  std::string packed(width * v.size(), '\0');
  for (std::size_t i = 0; i < v.size(); ++i) packed.replace(i * width, v[i].size(), v[i]);
  Handle t = text_type(h, width);
  put_attr(h, obj, name, t, scalar ? -1 : static_cast<long>(v.size()), packed.data());
}

// The checksums of each kind of value (digest.h); writer and reader agree through these.
std::string sum_of(const std::string& s) {
  Digest d;
  d.text(s);
  return d.str();
}
std::string sum_of(const std::vector<std::string>& v) {
  Digest d;
  d.num<std::uint64_t>(v.size());
  for (const auto& s : v) d.text(s);
  return d.str();
}
std::string sum_of(std::int64_t v) {
  Digest d;
  d.num(v);
  return d.str();
}
std::string sum_of(const std::vector<double>& v) {
  Digest d;
  d.num<std::uint64_t>(v.size());
  for (double x : v) d.num(x);
  return d.str();
}

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
  Handle ftype =
      h.own(H5Aget_type(a.id), H5Tclose, fmt::format("get the type of attribute '{}'", name));
  if (H5Tget_class(ftype) != H5T_STRING)
    throw Hdf5Error(h.path(), fmt::format("attribute '{}' is not text", name));
  const auto n = static_cast<std::size_t>(a.n);
  std::vector<std::string> out;
  if (n == 0) return out;
  if (h.yes(H5Tis_variable_str(ftype),
            "ask whether a string is variable-length")) {  // an older file
    Handle t = text_type(h, 0);
    std::vector<char*> ptrs(n, nullptr);
    h.ok(H5Aread(a.id, t, ptrs.data()), fmt::format("read attribute '{}'", name));
    for (char* p : ptrs) out.emplace_back(p ? p : "");
    H5Dvlen_reclaim(t, a.space, H5P_DEFAULT, ptrs.data());
    return out;
  }
  std::size_t width = H5Tget_size(ftype);
  if (width == 0) h.fail(fmt::format("get the width of attribute '{}'", name));
  Handle t = text_type(h, width);
  std::string packed(width * n, '\0');
  h.ok(H5Aread(a.id, t, packed.data()), fmt::format("read attribute '{}'", name));
  for (std::size_t i = 0; i < n; ++i)
    out.emplace_back(packed.data() + i * width, strnlen(packed.data() + i * width, width));
  return out;
}

template <class V>
std::vector<V> get_numbers(const Hdf5& h, hid_t obj, const char* name, hid_t type) {
  Attr a = open_attr(h, obj, name);
  std::vector<V> out(static_cast<std::size_t>(a.n));
  if (!out.empty()) h.ok(H5Aread(a.id, type, out.data()), fmt::format("read attribute '{}'", name));
  return out;
}

}  // namespace

void write_text_attr(const Hdf5& h, hid_t obj, const char* name, const std::string& value) {
  put_texts(h, obj, name, {value}, true);
}

std::string read_text_attr(const Hdf5& h, hid_t obj, const char* name) {
  auto v = get_texts(h, obj, name);
  if (v.size() != 1)
    throw Hdf5Error(h.path(), fmt::format("attribute '{}' is not one string", name));
  return v[0];
}

AttrWriter::AttrWriter(const Hdf5& h, hid_t obj) : h_(h), obj_(obj) {}

void AttrWriter::text(const char* name, const std::string& v) {
  put_texts(h_, obj_, name, {v}, true);
  sums_.push_back(fmt::format("{} {}", name, sum_of(v)));
}
void AttrWriter::texts(const char* name, const std::vector<std::string>& v) {
  put_texts(h_, obj_, name, v, false);
  sums_.push_back(fmt::format("{} {}", name, sum_of(v)));
}
void AttrWriter::i64(const char* name, std::int64_t v) {
  put_attr(h_, obj_, name, H5T_NATIVE_INT64, -1, &v);
  sums_.push_back(fmt::format("{} {}", name, sum_of(v)));
}
void AttrWriter::numbers(const char* name, const std::vector<double>& v) {
  put_attr(h_, obj_, name, H5T_NATIVE_DOUBLE, static_cast<long>(v.size()), v.data());
  sums_.push_back(fmt::format("{} {}", name, sum_of(v)));
}
void AttrWriter::finish() { put_texts(h_, obj_, kChecksumsAttr, sums_, false); }

AttrReader::AttrReader(const Hdf5& h, hid_t obj, std::string where)
    : h_(h), obj_(obj), where_(std::move(where)) {
  checked_ = h.yes(H5Aexists(obj, kChecksumsAttr), "look for the attribute checksums");
  if (!checked_) return;
  for (const auto& line : get_texts(h, obj, kChecksumsAttr)) {
    auto space = line.find(' ');
    if (space == std::string::npos)
      throw DamageError(fmt::format("{} attribute '{}' is garbled", where_, kChecksumsAttr));
    sums_[line.substr(0, space)] = line.substr(space + 1);
  }
}

void AttrReader::check(const char* name, const std::string& sum) const {
  if (!checked_) return;
  auto it = sums_.find(name);
  if (it == sums_.end())
    throw DamageError(
        fmt::format("{} attribute '{}' has no checksum in '{}'", where_, name, kChecksumsAttr));
  if (it->second != sum)
    throw DamageError(fmt::format("{} attribute '{}' does not match its checksum", where_, name));
}

std::string AttrReader::text(const char* name) const {
  auto v = get_texts(h_, obj_, name);
  if (v.size() != 1)
    throw Hdf5Error(h_.path(), fmt::format("{} attribute '{}' is not one string", where_, name));
  check(name, sum_of(v[0]));
  return v[0];
}
std::vector<std::string> AttrReader::texts(const char* name) const {
  auto v = get_texts(h_, obj_, name);
  check(name, sum_of(v));
  return v;
}
std::int64_t AttrReader::i64(const char* name) const {
  auto v = get_numbers<std::int64_t>(h_, obj_, name, H5T_NATIVE_INT64);
  if (v.size() != 1)
    throw Hdf5Error(h_.path(), fmt::format("{} attribute '{}' is not one number", where_, name));
  check(name, sum_of(v[0]));
  return v[0];
}
std::vector<double> AttrReader::numbers(const char* name) const {
  auto v = get_numbers<double>(h_, obj_, name, H5T_NATIVE_DOUBLE);
  check(name, sum_of(v));
  return v;
}

namespace {

template <class V>
void put_map(AttrWriter& w, const char* keys_name, const char* values_name,
             const std::map<std::string, V>& m) {
  std::vector<std::string> keys;
  std::vector<V> values;
  for (const auto& [k, v] : m) {
    keys.push_back(k);
    values.push_back(v);
  }
  w.texts(keys_name, keys);
  if constexpr (std::is_same_v<V, std::string>) {
    w.texts(values_name, values);
  } else {
    w.numbers(values_name, values);
  }
}

template <class V>
std::map<std::string, V> get_map(const AttrReader& r, const char* keys_name,
                                 const char* values_name) {
  auto keys = r.texts(keys_name);
  std::vector<V> values;
  if constexpr (std::is_same_v<V, std::string>) {
    values = r.texts(values_name);
  } else {
    values = r.numbers(values_name);
  }
  if (keys.size() != values.size())
    throw Hdf5Error(r.path(), fmt::format("/meta attributes '{}' and '{}' differ in length",
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
  if (!h.yes(H5Aexists(g, "format"), "look for /meta format") ||
      AttrReader(h, g, "/meta").text("format") != kArchiveFormat)
    throw LayoutError(fmt::format("has no /meta attribute format = \"{}\"", kArchiveFormat));
  if (!h.yes(H5Aexists(g, "schema_version"), "look for /meta schema_version"))
    throw LayoutError("has no /meta attribute schema_version");
  return g;
}

}  // namespace

void write_meta(const Hdf5& h, hid_t file, const Meta& m) {
  Handle g = h.own(H5Gcreate2(file, "meta", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                   "create /meta");
  AttrWriter w(h, g);
  w.text("format", kArchiveFormat);
  w.i64("schema_version", m.schema_version);
  w.text("tool_version", m.tool_version);
  w.text("git_commit", m.git_commit);
  w.text("job_name", m.job_name);
  w.text("job_toml", m.job_toml);
  w.text("job_hash", m.job_hash);
  put_map(w, "target_names", "target_texts", m.targets);
  put_map(w, "kernel_files", "kernel_sources", m.kernel_sources);
  w.i64("ranks", m.ranks);
  w.i64("threads", m.threads);
  w.text("start_time", m.start_time);
  w.text("end_time", m.end_time);
  put_map(w, "phase_names", "phase_seconds", m.phase_seconds);
  w.text("status", m.status);
  w.finish();
}

MetaRead read_meta(const Hdf5& h, hid_t file) {
  Handle g = open_meta_group(h, file);
  AttrReader r(h, g, "/meta");
  MetaRead out{{}, r.checked()};
  Meta& m = out.meta;
  r.text("format");  // checked again, against its checksum
  m.schema_version = r.i64("schema_version");
  if (m.schema_version < kOldestReadableSchema || m.schema_version > kSchemaVersion)
    return out;  // the caller refuses it
  m.tool_version = r.text("tool_version");
  m.git_commit = r.text("git_commit");
  m.job_name = r.text("job_name");
  m.job_toml = r.text("job_toml");
  m.job_hash = r.text("job_hash");
  m.targets = get_map<std::string>(r, "target_names", "target_texts");
  m.kernel_sources = get_map<std::string>(r, "kernel_files", "kernel_sources");
  m.ranks = r.i64("ranks");
  m.threads = r.i64("threads");
  m.start_time = r.text("start_time");
  m.end_time = r.text("end_time");
  m.phase_seconds = get_map<double>(r, "phase_names", "phase_seconds");
  m.status = r.text("status");
  return out;
}

}  // namespace ts::store::detail

#include "table_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "columns.h"
#include "digest.h"
#include "meta_io.h"

namespace ts::store::detail {
namespace {

// Rows per HDF5 chunk aim at ~1 MiB chunks; rows per read/write call at ~32 MiB buffers.
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
constexpr std::size_t kBlockBytes = std::size_t{32} << 20;
constexpr unsigned kDeflateLevel = 4;
// Rows wider than this (a row with a ~1000-character config is ~1.3 KiB) were widened by a long
// outlier (text is never variable-length): their NUL padding dominates, and level 1 deflates and
// inflates it about twice as fast as level 4 (bench/RESULTS.md, issue 23).
constexpr std::size_t kWideRowBytes = 2048;
constexpr unsigned kWideRowDeflateLevel = 1;

// Where one column sits in a packed row. A variable-length text column holds a char pointer;
// an absent one (an older file's) takes no bytes.
struct Slot {
  std::size_t offset = 0;
  std::size_t size = 0;
  bool var = false;
  bool absent = false;
};

struct Layout {
  std::vector<Slot> slots;
  std::size_t row = 0;
  bool any_var = false;
};

template <class Rec>
bool is_text(const Column<Rec>& col) {
  return std::holds_alternative<std::string Rec::*>(col.field);
}

// The size of a non-text column's value.
template <class Rec>
std::size_t value_size(const Column<Rec>& col) {
  const Rec probe;
  return visit_value(col, probe, [](const auto& v) { return sizeof v; });
}

// Stores the column's value into its slot of a row; a variable-length slot points into `rec`.
template <class Rec>
void put(const Column<Rec>& col, const Rec& rec, char* row, Slot slot) {
  char* dst = row + slot.offset;
  visit_value(col, rec, [&](const auto& v) {
    using V = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<V, std::string>) {
      if (slot.var) {
        const char* p = v.c_str();
        std::memcpy(dst, &p, sizeof p);
        return;
      }
      std::memcpy(dst, v.data(), v.size());
      std::memset(dst + v.size(), 0, slot.size - v.size());
    } else if constexpr (std::is_same_v<V, bool>) {
      *dst = v ? 1 : 0;
    } else {
      std::memcpy(dst, &v, sizeof v);
    }
  });
}

template <class Rec>
void get(const Column<Rec>& col, Rec& rec, const char* row, Slot slot) {
  if (slot.absent) return;
  const char* src = row + slot.offset;
  visit_value(col, rec, [&](auto& v) {
    using V = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<V, std::string>) {
      if (slot.var) {
        const char* p = nullptr;
        std::memcpy(&p, src, sizeof p);
        v.assign(p ? p : "");
        return;
      }
      v.assign(src, strnlen(src, slot.size));
    } else if constexpr (std::is_same_v<V, bool>) {
      v = *src != 0;
    } else {
      std::memcpy(&v, src, sizeof v);
    }
  });
}

// Feeds the row's stored columns (an older file's absent ones excluded) to `d`.
template <class Rec>
void digest_row(Digest& d, const Rec& rec, const Layout& layout) {
  auto cols = Table<Rec>::columns();
  for (std::size_t c = 0; c < cols.size(); ++c) {
    if (layout.slots[c].absent) continue;
    visit_value(cols[c], rec, [&](const auto& v) {
      using V = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<V, std::string>)
        d.text(v);
      else if constexpr (std::is_same_v<V, bool>)
        d.num<std::uint8_t>(v ? 1 : 0);
      else
        d.num(v);
    });
  }
}

// The HDF5 type of one column: UTF-8 string (fixed or variable length), bool enum (h5py reads
// it as numpy bool), or the native number type.
template <class Rec>
Handle member_type(const Hdf5& h, const Column<Rec>& col, Slot slot) {
  if (is_text(col)) {
    Handle t = h.own(H5Tcopy(H5T_C_S1), H5Tclose, "copy string type");
    h.ok(H5Tset_size(t, slot.var ? H5T_VARIABLE : slot.size), "set string size");
    h.ok(H5Tset_strpad(t, H5T_STR_NULLPAD), "set string padding");
    h.ok(H5Tset_cset(t, H5T_CSET_UTF8), "set string charset");
    return t;
  }
  if (std::holds_alternative<bool Rec::*>(col.field)) {
    Handle t = h.own(H5Tenum_create(H5T_NATIVE_INT8), H5Tclose, "create bool type");
    std::int8_t no = 0, yes = 1;
    h.ok(H5Tenum_insert(t, "FALSE", &no), "insert FALSE");
    h.ok(H5Tenum_insert(t, "TRUE", &yes), "insert TRUE");
    return t;
  }
  hid_t native = std::visit(
      [](auto m) -> hid_t {
        using M = decltype(m);
        if constexpr (std::is_same_v<M, std::int8_t Rec::*>) return H5T_NATIVE_INT8;
        if constexpr (std::is_same_v<M, std::int32_t Rec::*>) return H5T_NATIVE_INT32;
        if constexpr (std::is_same_v<M, std::int64_t Rec::*>) return H5T_NATIVE_INT64;
        return H5T_NATIVE_DOUBLE;
      },
      col.field);
  return h.own(H5Tcopy(native), H5Tclose, "copy number type");
}

template <class Rec>
Handle row_type(const Hdf5& h, const Layout& layout) {
  auto cols = Table<Rec>::columns();
  Handle t = h.own(H5Tcreate(H5T_COMPOUND, layout.row), H5Tclose, "create compound type");
  for (std::size_t i = 0; i < cols.size(); ++i) {
    if (layout.slots[i].absent) continue;
    Handle m = member_type(h, cols[i], layout.slots[i]);
    h.ok(H5Tinsert(t, cols[i].name, layout.slots[i].offset, m),
         fmt::format("add column '{}'", cols[i].name));
  }
  return t;
}

// Packs the slots (sizes and var flags given) one after another.
Layout pack(std::vector<Slot> slots) {
  Layout l;
  for (Slot& s : slots) {
    s.offset = l.row;
    l.row += s.size;
    l.any_var = l.any_var || s.var;
  }
  l.slots = std::move(slots);
  return l;
}

Slot var_text() { return {0, sizeof(char*), true}; }

// Text columns are as wide as their longest value (at least 1 byte). Never variable-length: that
// text would live in HDF5's global heap, which nothing checksums and whose damage crashes HDF5
// itself; deflate shrinks the NUL padding of a long outlier to almost nothing. (Older files'
// variable-length columns are still read.)
template <class Rec>
Layout write_layout(const Hdf5& h, std::span<const Rec> rows) {
  std::vector<Slot> slots;
  for (const auto& col : Table<Rec>::columns()) {
    if (!is_text(col)) {
      slots.push_back({0, value_size(col), false});
      continue;
    }
    auto m = std::get<std::string Rec::*>(col.field);
    std::size_t width = 1;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const std::string& s = rows[r].*m;
      if (s.find('\0') != std::string::npos)
        throw Hdf5Error(h.path(),
                        fmt::format("column '{}' of /{} row {} holds a NUL byte, which an "
                                    "HDF5 string cannot store",
                                    col.name, Table<Rec>::name, r));
      width = std::max(width, s.size());
    }
    slots.push_back(Slot{0, width, false});
  }
  return pack(std::move(slots));
}

Handle create_dataset(const Hdf5& h, hid_t file, const char* name, hid_t type, hsize_t n,
                      std::size_t row_bytes) {
  hsize_t maxdim = H5S_UNLIMITED;
  hsize_t chunk = std::clamp<hsize_t>(kChunkBytes / row_bytes, 1, std::max<hsize_t>(n, 1));
  Handle space = h.own(H5Screate_simple(1, &n, &maxdim), H5Sclose, "create dataspace");
  Handle dcpl = h.own(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "create dataset properties");
  h.ok(H5Pset_chunk(dcpl, 1, &chunk), "set chunk size");
  h.ok(H5Pset_shuffle(dcpl), "set shuffle filter");
  h.ok(H5Pset_deflate(dcpl, row_bytes > kWideRowBytes ? kWideRowDeflateLevel : kDeflateLevel),
       "set deflate filter");
  h.ok(H5Pset_fletcher32(dcpl), "set fletcher32 filter");  // last: it checks the compressed chunk
  return h.own(H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose,
               fmt::format("create /{}", name));
}

// Selects rows [first, first + count) of `file_space`; returns the matching memory space.
Handle select_rows(const Hdf5& h, hid_t file_space, hsize_t first, hsize_t count) {
  h.ok(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &first, nullptr, &count, nullptr),
       "select rows");
  return h.own(H5Screate_simple(1, &count, nullptr), H5Sclose, "create memory dataspace");
}

}  // namespace

template <class Rec>
void write_table(const Hdf5& h, hid_t file, std::span<const Rec> rows) {
  auto cols = Table<Rec>::columns();
  Layout layout = write_layout(h, rows);
  Handle type = row_type<Rec>(h, layout);
  Handle ds = create_dataset(h, file, Table<Rec>::name, type, rows.size(), layout.row);
  Handle space = h.own(H5Dget_space(ds), H5Sclose, "get dataspace");
  std::size_t block = std::max<std::size_t>(1, kBlockBytes / layout.row);
  std::vector<char> buf(std::min(block, rows.size()) * layout.row);
  for (std::size_t first = 0; first < rows.size(); first += block) {
    std::size_t count = std::min(block, rows.size() - first);
    for (std::size_t r = 0; r < count; ++r)
      for (std::size_t c = 0; c < cols.size(); ++c)
        put(cols[c], rows[first + r], buf.data() + r * layout.row, layout.slots[c]);
    Handle mem = select_rows(h, space, first, count);
    h.ok(H5Dwrite(ds, type, mem, space, H5P_DEFAULT, buf.data()),
         fmt::format("write /{}", Table<Rec>::name));
  }
  Digest digest;
  for (const Rec& r : rows) digest_row(digest, r, layout);
  write_text_attr(h, ds, kChecksumAttr, digest.str());
  h.ok(ds.close(), fmt::format("close /{}", Table<Rec>::name));
}

namespace {

// The read layout: the file's string widths, our number sizes; every column must exist, but
// those added after the file's schema `version`.
template <class Rec>
Layout read_layout(const Hdf5& h, hid_t ds, int version) {
  Handle ftype = h.own(H5Dget_type(ds), H5Tclose, "get row type");
  if (H5Tget_class(ftype) != H5T_COMPOUND)
    throw LayoutError(fmt::format("/{} is not a table", Table<Rec>::name));
  std::vector<Slot> slots;
  for (const auto& col : Table<Rec>::columns()) {
    int idx = H5Tget_member_index(ftype, col.name);
    if (idx < 0) {
      H5Eclear2(H5E_DEFAULT);
      if (col.since > version) {
        slots.push_back({0, 0, false, true});
        continue;
      }
      throw LayoutError(fmt::format("/{} has no column '{}'", Table<Rec>::name, col.name));
    }
    if (!is_text(col)) {
      slots.push_back({0, value_size(col), false});
      continue;
    }
    Handle mtype = h.own(H5Tget_member_type(ftype, idx), H5Tclose, "get column type");
    if (H5Tget_class(mtype) != H5T_STRING)
      throw LayoutError(fmt::format("column '{}' of /{} is not text", col.name, Table<Rec>::name));
    if (h.yes(H5Tis_variable_str(mtype), "ask whether a string is variable-length")) {
      slots.push_back(var_text());
      continue;
    }
    std::size_t width = H5Tget_size(mtype);
    if (width == 0) h.fail(fmt::format("get the width of column '{}'", col.name));
    slots.push_back({0, width, false});
  }
  return pack(std::move(slots));
}

// Frees the strings HDF5 allocated for the variable-length columns of one read block.
struct VlenGuard {
  VlenGuard(hid_t type, hid_t space, void* buf) : type(type), space(space), buf(buf) {}
  VlenGuard(const VlenGuard&) = delete;
  VlenGuard& operator=(const VlenGuard&) = delete;
  hid_t type;
  hid_t space;
  void* buf;
  ~VlenGuard() {
    if (type >= 0) H5Dvlen_reclaim(type, space, H5P_DEFAULT, buf);
  }
};

// Compares the rows read with the table's checksum attribute; `required`: a missing one is damage.
template <class Rec>
void check_rows(const Hdf5& h, hid_t ds, const std::vector<Rec>& rows, const Layout& layout,
                bool required) {
  const char* name = Table<Rec>::name;
  if (!h.yes(H5Aexists(ds, kChecksumAttr), fmt::format("look for the checksum of /{}", name))) {
    if (required) throw DamageError(fmt::format("/{} has lost its checksum attribute", name));
    return;
  }
  Digest digest;
  for (const Rec& r : rows) digest_row(digest, r, layout);
  if (read_text_attr(h, ds, kChecksumAttr) != digest.str())
    throw DamageError(fmt::format("/{} does not match its checksum", name));
}

}  // namespace

template <class Rec>
std::vector<Rec> read_table(const Hdf5& h, hid_t file, int version, bool checksummed) {
  const char* name = Table<Rec>::name;
  if (!h.yes(H5Lexists(file, name, H5P_DEFAULT), fmt::format("look for /{}", name)))
    throw LayoutError(fmt::format("has no /{} table", name));
  Handle ds = h.own(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose, fmt::format("open /{}", name));
  Layout layout = read_layout<Rec>(h, ds, version);
  Handle type = row_type<Rec>(h, layout);
  Handle space = h.own(H5Dget_space(ds), H5Sclose, "get dataspace");
  hsize_t n = 0;
  if (H5Sget_simple_extent_ndims(space) != 1 || H5Sget_simple_extent_dims(space, &n, nullptr) < 0)
    throw LayoutError(fmt::format("/{} is not a one-dimensional table", name));
  auto cols = Table<Rec>::columns();
  std::vector<Rec> out(n);
  std::size_t block = std::max<std::size_t>(1, kBlockBytes / layout.row);
  std::vector<char> buf(std::min<std::size_t>(block, n) * layout.row);
  for (std::size_t first = 0; first < n; first += block) {
    std::size_t count = std::min<std::size_t>(block, n - first);
    Handle mem = select_rows(h, space, first, count);
    h.ok(H5Dread(ds, type, mem, space, H5P_DEFAULT, buf.data()), fmt::format("read /{}", name));
    VlenGuard guard{layout.any_var ? type.get() : -1, mem, buf.data()};
    for (std::size_t r = 0; r < count; ++r)
      for (std::size_t c = 0; c < cols.size(); ++c)
        get(cols[c], out[first + r], buf.data() + r * layout.row, layout.slots[c]);
  }
  check_rows(h, ds, out, layout, checksummed);
  return out;
}

#define TS_STORE_TABLE(Rec)                                                 \
  template void write_table<Rec>(const Hdf5&, hid_t, std::span<const Rec>); \
  template std::vector<Rec> read_table<Rec>(const Hdf5&, hid_t, int, bool);
TS_STORE_TABLE(CandidateRecord)
TS_STORE_TABLE(BestRecord)
TS_STORE_TABLE(ProofRecord)
TS_STORE_TABLE(ProgressRecord)
TS_STORE_TABLE(SourceRecord)
TS_STORE_TABLE(OriginRecord)
TS_STORE_TABLE(LibraryEntry)
#undef TS_STORE_TABLE

}  // namespace ts::store::detail

// A header-only reader of tilesweep shape libraries (written by `tilesweep select`, layout in
// include/tilesweep/store/library.h and results/README.md), for frameworks that want the
// library's answers without linking tilesweep. Unlike the rest of tilesweep (where only
// src/store touches HDF5) it calls the HDF5 C API directly, since a header-only reader cannot
// hide it: include it and link HDF5 (Debian: libhdf5-dev, `pkg-config --libs hdf5-serial`, or
// CMake's `find_package(HDF5 COMPONENTS C)` + `hdf5::hdf5`).
//
// Lookups follow `tilesweep lookup`: an exact (kernel, target, mesh, dims) match, else the entry
// of the same kernel, target, mesh and dim names with the smallest sum of |log2(dim ratio)|,
// ties to the larger shape. lookup() gives its whole answer: the rule in the same words, and the
// NKI source only for an exact match — an entry's kernel is built for the entry's shape, so for
// another shape it gives none and says that re-instantiating the configuration there needs the
// lowering (`tilesweep lookup ... --nki`, the command spelled out). find() returns the entry
// alone (its `nki` is for its own `shape`). Errors throw std::runtime_error naming the file; a
// damaged file fails HDF5's own checks (Fletcher32 on every chunk, metadata checksums) as "cannot
// read column". Not thread-safe (serial HDF5 is not).
#pragma once

#include <hdf5.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ts::library_reader {

struct Entry {
  std::string kernel, target, shape, mesh, config, archive, nki, nki_error;
  std::string
      sharding;  // how the kernel is split over the mesh ("" on one device; config is per device)
  std::int64_t index = 0;
  double latency_ns = 0, roofline_ns = 0;
  std::map<std::string, std::int64_t> dims;  // parsed from shape
};

// What `tilesweep lookup` answers for a (kernel, target, dims, mesh).
struct Answer {
  const Entry* entry = nullptr;  // the exact or nearest entry; nullptr when there is none
  bool exact = false;
  double distance = 0;  // sum of |log2(dim ratio)|; 0 when exact
  std::string rule;     // how the entry was chosen, as `tilesweep lookup` prints it
  std::string nki;      // NKI source for the asked shape: the entry's when exact, else ""
  std::string note;     // for another shape: why there is no NKI and the command that makes one
};

class Library {
 public:
  explicit Library(const std::string& path) : path_(path) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) fail("cannot open it as HDF5");
    hid_t ds = H5Dopen2(f, "entries", H5P_DEFAULT);
    if (ds < 0) {
      H5Fclose(f);
      fail("has no /entries table (not a tilesweep shape library)");
    }
    try {
      read_all(ds);
    } catch (...) {
      H5Dclose(ds), H5Fclose(f);
      throw;
    }
    H5Dclose(ds), H5Fclose(f);
  }

  const std::vector<Entry>& entries() const { return entries_; }

  // The exact or nearest entry (nullptr when the kernel/target/mesh/dim names have none). Its
  // `nki` is built for its own `shape`: for the answer to give a caller, use lookup().
  const Entry* find(const std::string& kernel, const std::string& target,
                    const std::map<std::string, std::int64_t>& dims, const std::string& mesh = "1",
                    bool* exact = nullptr, double* distance = nullptr) const {
    const Entry* best = nullptr;
    double best_d = 0, best_v = 0;
    for (const Entry& e : entries_) {
      if (e.kernel != kernel || e.target != target || e.mesh != mesh ||
          e.dims.size() != dims.size())
        continue;
      double d = 0, v = 1;
      bool same_names = true;
      for (const auto& [name, size] : dims) {
        auto it = e.dims.find(name);
        if (it == e.dims.end()) {
          same_names = false;
          break;
        }
        d += std::abs(std::log2(double(it->second) / double(size)));
        v *= double(it->second);
      }
      if (!same_names) continue;
      if (!best || d < best_d - 1e-12 || (std::abs(d - best_d) <= 1e-12 && v > best_v))
        best = &e, best_d = d, best_v = v;
    }
    if (exact) *exact = best && best->dims == dims;
    if (distance) *distance = best ? best_d : 0;
    return best;
  }

  // The answer `tilesweep lookup` gives; `entry` is nullptr (and `rule` says so) when the
  // kernel, target, mesh and dim names have no entry.
  Answer lookup(const std::string& kernel, const std::string& target,
                const std::map<std::string, std::int64_t>& dims,
                const std::string& mesh = "1") const {
    Answer a;
    a.entry = find(kernel, target, dims, mesh, &a.exact, &a.distance);
    std::string shape;
    for (const auto& [name, size] : dims)
      shape += (shape.empty() ? "" : ",") + name + "=" + std::to_string(size);
    if (!a.entry) {
      a.rule = "no entry of kernel '" + kernel + "' on " + target + " (mesh " + mesh +
               ") with these dim names";
      return a;
    }
    if (a.exact) {
      a.rule = "exact match";
      a.nki = a.entry->nki;
      return a;
    }
    char d[64];
    std::snprintf(d, sizeof d, "%.3f", a.distance);
    a.rule =
        std::string("nearest: same kernel, target and mesh; smallest sum of |log2(dim ratio)| = ") +
        d + "; ties to the larger shape";
    a.note = shape + " was not swept; the entry's NKI kernel is built for " + a.entry->shape +
             " only. Re-instantiating its configuration at " + shape +
             " needs the lowering: tilesweep lookup " + path_ + " --kernel " + kernel +
             " --target " + target + " --shape " + shape + (mesh == "1" ? "" : " --mesh " + mesh) +
             " --nki (prints that shape's NKI and simulated latency, or why it cannot)";
    return a;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("library '" + path_ + "': " + what);
  }

  // Reads one column of /entries: a compound memory type holding only that member.
  template <class T>
  std::vector<T> numbers(hid_t ds, const char* name, hid_t native, std::size_t n) const {
    std::vector<T> out(n);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(T));
    H5Tinsert(t, name, 0, native);
    herr_t st = n ? H5Dread(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) : 0;
    H5Tclose(t);
    if (st < 0) fail(std::string("cannot read column '") + name + "'");
    return out;
  }

  // Text columns are fixed-length or variable-length strings; read each as stored. An optional
  // column (one a library of an older schema lacks) reads as "" when missing.
  std::vector<std::string> texts(hid_t ds, const char* name, std::size_t n,
                                 bool optional = false) const {
    hid_t ftype = H5Dget_type(ds);
    int idx = H5Tget_member_index(ftype, name);
    if (idx < 0 && optional) {
      H5Tclose(ftype);
      H5Eclear2(H5E_DEFAULT);
      return std::vector<std::string>(n);
    }
    if (idx < 0) {
      H5Tclose(ftype);
      fail(std::string("/entries has no column '") + name + "'");
    }
    hid_t mtype = H5Tget_member_type(ftype, static_cast<unsigned>(idx));
    bool var = H5Tis_variable_str(mtype) > 0;
    std::size_t width = var ? sizeof(char*) : H5Tget_size(mtype);
    H5Tclose(mtype), H5Tclose(ftype);
    hid_t s = H5Tcopy(H5T_C_S1);
    H5Tset_size(s, var ? H5T_VARIABLE : width);
    H5Tset_strpad(s,
                  H5T_STR_NULLPAD);  // as stored: NULLTERM would cut a full-width value's last byte
    H5Tset_cset(s, H5T_CSET_UTF8);
    hid_t t = H5Tcreate(H5T_COMPOUND, width);
    H5Tinsert(t, name, 0, s);
    std::vector<char> buf(n * width);
    herr_t st = n ? H5Dread(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) : 0;
    std::vector<std::string> out;
    for (std::size_t i = 0; st >= 0 && i < n; ++i) {
      const char* p = buf.data() + i * width;
      if (var) {
        const char* q = nullptr;
        std::memcpy(&q, p, sizeof q);
        out.emplace_back(q ? q : "");
      } else {
        out.emplace_back(p, strnlen(p, width));
      }
    }
    if (var && st >= 0 && n) {
      hid_t space = H5Dget_space(ds);
      H5Dvlen_reclaim(t, space, H5P_DEFAULT, buf.data());
      H5Sclose(space);
    }
    H5Tclose(t), H5Tclose(s);
    if (st < 0) fail(std::string("cannot read column '") + name + "'");
    return out;
  }

  void read_all(hid_t ds) {
    hid_t space = H5Dget_space(ds);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(space, &n, nullptr);
    H5Sclose(space);
    auto kernel = texts(ds, "kernel", n), target = texts(ds, "target", n),
         shape = texts(ds, "shape", n);
    auto mesh = texts(ds, "mesh", n), config = texts(ds, "config", n),
         archive = texts(ds, "archive", n);
    auto nki = texts(ds, "nki", n), nki_error = texts(ds, "nki_error", n);
    auto sharding = texts(ds, "sharding", n, true);  // schema 2
    auto index = numbers<std::int64_t>(ds, "index", H5T_NATIVE_INT64, n);
    auto latency = numbers<double>(ds, "latency_ns", H5T_NATIVE_DOUBLE, n);
    auto roofline = numbers<double>(ds, "roofline_ns", H5T_NATIVE_DOUBLE, n);
    for (std::size_t i = 0; i < n; ++i) {
      Entry e{kernel[i],    target[i],   shape[i], mesh[i],    config[i],   archive[i], nki[i],
              nki_error[i], sharding[i], index[i], latency[i], roofline[i], {}};
      std::stringstream ss(e.shape);
      std::string item;
      while (std::getline(ss, item, ','))
        if (auto eq = item.find('='); eq != std::string::npos)
          e.dims[item.substr(0, eq)] = std::stoll(item.substr(eq + 1));
      entries_.push_back(std::move(e));
    }
  }

  std::string path_;
  std::vector<Entry> entries_;
};

}  // namespace ts::library_reader

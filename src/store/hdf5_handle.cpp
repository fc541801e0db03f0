#include "hdf5_handle.h"

#include <fmt/format.h>

#include <cstdint>
#include <mutex>

namespace ts::store::detail {
namespace {

// HDF5 prints its error stack to stderr by default; the store reports it in exceptions instead.
void quiet_hdf5() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

herr_t collect(unsigned n, const H5E_error2_t* e, void* data) {
  auto& out = *static_cast<std::string*>(data);
  if (n > 0) out += "; ";
  out += fmt::format("{}(): {}", e->func_name ? e->func_name : "?", e->desc ? e->desc : "?");
  // Some descriptions embed ctime() text with its newline; keep the message on one line.
  while (!out.empty() && out.back() == '\n') out.pop_back();
  for (char& c : out)
    if (c == '\n') c = ' ';
  return 0;
}

}  // namespace

std::string take_error_stack() {
  std::string out;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, &out);
  H5Eclear2(H5E_DEFAULT);
  if (out.empty()) return "no HDF5 error message";
  // The outermost call says what failed, the innermost why; the frames between are HDF5's own.
  auto first = out.find("; "), last = out.rfind("; ");
  if (first != std::string::npos && out.find("; ", first + 2) < last)
    out = out.substr(0, first) + "; ...; " + out.substr(last + 2);
  return out;
}

Hdf5::Hdf5(std::string path) : path_(std::move(path)) { quiet_hdf5(); }

Handle Hdf5::own(hid_t id, Closer closer, std::string_view what) const {
  if (id < 0) fail(what);
  return Handle(id, closer);
}

void Hdf5::ok(herr_t status, std::string_view what) const {
  if (status < 0) fail(what);
}

bool Hdf5::yes(htri_t answer, std::string_view what) const {
  if (answer < 0) fail(what);
  return answer > 0;
}

void Hdf5::fail(std::string_view what) const {
  throw Hdf5Error(path_, fmt::format("{}: {}", what, take_error_stack()));
}

Handle file_access(const Hdf5& h) {
  Handle fapl = h.own(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "create file access properties");
  h.ok(H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG), "set file close degree");
#if H5_VERSION_GE(1, 12, 1) || (H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 10 && H5_VERS_RELEASE >= 7)
  h.ok(H5Pset_file_locking(fapl, true, true), "set file locking");
#endif
  return fapl;
}

Handle create_in_memory(const Hdf5& h) {
  Handle fapl = h.own(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "create file access properties");
  h.ok(H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG), "set file close degree");
  h.ok(H5Pset_fapl_core(fapl, std::size_t{1} << 20, false), "choose the in-memory file driver");
  h.ok(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST),
       "choose the newest file format");
  return h.own(H5Fcreate(h.path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), H5Fclose,
               "create file");
}

namespace {

// Bob Jenkins' lookup3 hashlittle() (public domain), byte by byte: HDF5's metadata checksum.
std::uint32_t lookup3(const unsigned char* k, std::size_t length) {
  auto rot = [](std::uint32_t x, int r) { return (x << r) | (x >> (32 - r)); };
  std::uint32_t a, b, c;
  a = b = c = 0xdeadbeef + static_cast<std::uint32_t>(length);
  auto word = [&](int i) {
    return std::uint32_t{k[i]} | std::uint32_t{k[i + 1]} << 8 | std::uint32_t{k[i + 2]} << 16 |
           std::uint32_t{k[i + 3]} << 24;
  };
  while (length > 12) {
    a += word(0), b += word(4), c += word(8);
    a -= c, a ^= rot(c, 4), c += b;
    b -= a, b ^= rot(a, 6), a += c;
    c -= b, c ^= rot(b, 8), b += a;
    a -= c, a ^= rot(c, 16), c += b;
    b -= a, b ^= rot(a, 19), a += c;
    c -= b, c ^= rot(b, 4), b += a;
    length -= 12, k += 12;
  }
  if (length == 0) return c;
  std::uint32_t abc[3] = {0, 0, 0};
  for (std::size_t i = 0; i < length; ++i) abc[i / 4] += std::uint32_t{k[i]} << (8 * (i % 4));
  a += abc[0], b += abc[1], c += abc[2];
  c ^= b, c -= rot(b, 14);
  a ^= c, a -= rot(c, 11);
  b ^= a, b -= rot(a, 25);
  c ^= b, c -= rot(b, 16);
  a ^= c, a -= rot(c, 4);
  b ^= a, b -= rot(a, 14);
  c ^= b, c -= rot(b, 24);
  return c;
}

// HDF5 before 1.14.7 (issue HDFGroup/hdf5#1915) clears the superblock's status flags in a file
// image without recomputing the superblock checksum, so the image would not open again. A
// version 2/3 superblock (the newest format) with 8-byte addresses: signature, version, sizes,
// flags (12 bytes), four addresses (32), then the checksum of those 44 bytes.
void fix_superblock_checksum(std::string& image) {
  constexpr std::size_t kSumAt = 44;
  auto* u = reinterpret_cast<unsigned char*>(image.data());
  if (image.size() < kSumAt + 4 || image.compare(0, 8, "\x89HDF\r\n\x1a\n") != 0 || u[8] < 2 ||
      u[9] != 8)
    return;
  std::uint32_t sum = lookup3(u, kSumAt);
  for (int i = 0; i < 4; ++i) u[kSumAt + i] = static_cast<unsigned char>(sum >> (8 * i));
}

}  // namespace

std::string file_image(const Hdf5& h, hid_t file) {
  h.ok(H5Fflush(file, H5F_SCOPE_GLOBAL), "flush file");
  ssize_t size = H5Fget_file_image(file, nullptr, 0);
  if (size < 0) h.fail("size the file image");
  std::string image(static_cast<std::size_t>(size), '\0');
  if (H5Fget_file_image(file, image.data(), image.size()) != size) h.fail("get the file image");
  fix_superblock_checksum(image);
  return image;
}

}  // namespace ts::store::detail

#include "hdf5_handle.h"

#include <fmt/format.h>

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
  return out.empty() ? "no HDF5 error message" : out;
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

Handle create_access(const Hdf5& h) {
  Handle fapl = file_access(h);
  h.ok(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), "choose the newest file format");
  return fapl;
}

}  // namespace ts::store::detail

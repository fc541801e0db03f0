// Checked HDF5 C calls and RAII ids (internal to the store). Every call goes through Hdf5::own
// or Hdf5::ok; a failure throws Hdf5Error carrying the file path, what was being done and HDF5's
// own error stack (collected with H5Ewalk; HDF5's automatic printing is turned off, since the
// library never prints). Not thread-safe, as serial HDF5 is not.
#pragma once

#include <hdf5.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace ts::store::detail {

// An HDF5 call failed. The archive layer turns it into the UserError the user sees.
// what() is "'<path>': <detail>"; detail() is what was being done and HDF5's message.
class Hdf5Error : public std::runtime_error {
 public:
  Hdf5Error(const std::string& path, std::string detail)
      : std::runtime_error("'" + path + "': " + detail), detail_(std::move(detail)) {}
  const std::string& detail() const { return detail_; }

 private:
  std::string detail_;
};

using Closer = herr_t (*)(hid_t);

// Owns one HDF5 id; closes it (ignoring failures) when destroyed unless close() ran first.
class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, -1)), closer_(o.closer_) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, -1);
      closer_ = o.closer_;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }  // NOLINT: handles pass straight into H5 calls
  // Closes now and returns HDF5's status (a file's close flushes, so its status matters).
  herr_t close() { return id_ < 0 ? 0 : closer_(std::exchange(id_, -1)); }

 private:
  void reset() {
    if (id_ >= 0) closer_(std::exchange(id_, -1));
  }
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// The checking context of one file: every failure message names it.
class Hdf5 {
 public:
  explicit Hdf5(std::string path);

  // Takes ownership of `id`, or throws when it is negative (the call failed).
  Handle own(hid_t id, Closer closer, std::string_view what) const;
  // Throws when `status` is negative.
  void ok(herr_t status, std::string_view what) const;
  // Like ok() for calls answering yes (> 0) / no (0) / failure (< 0).
  bool yes(htri_t answer, std::string_view what) const;
  [[noreturn]] void fail(std::string_view what) const;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// File access properties for reading: strong close (closing the file closes anything left open
// in it); file locking where the file system has it, without failing where it does not.
Handle file_access(const Hdf5& h);
// Creates a file in memory only (HDF5's core driver without a backing store), in the newest file
// format, whose metadata (superblock, object headers, chunk indexes, attribute heaps) carries
// checksums that HDF5 checks on every read. HDF5 never writes to disk, so a full disk can never
// leave it with a file it cannot close: file_image() hands the bytes to write_file_durably.
Handle create_in_memory(const Hdf5& h);
// The complete file image of an in-memory file (flushed first).
std::string file_image(const Hdf5& h, hid_t file);

// HDF5's current error stack as one line ("H5Fopen(): unable to open file; ..."), then clears it.
std::string take_error_stack();

}  // namespace ts::store::detail

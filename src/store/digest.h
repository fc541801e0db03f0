// Checksums of decoded values (internal to the store): what an archive or library holds beyond
// HDF5's own checks. Fletcher32 covers a table's chunks and the file format's checksums cover
// its metadata, but variable-length strings (long text columns, every /meta text) live in
// HDF5's global heap, which nothing checks; these digests cover them. FNV-1a 64 over each
// value's bytes (a string as its u64 length, then its bytes), written "fnv1a64:<16 hex digits>".
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "tilesweep/base/hash.h"

namespace ts::store::detail {

// A stored checksum does not match what was read: the file is damaged. what() names the part
// ("/candidates", "/meta attribute 'job_toml'").
class DamageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Digest {
 public:
  template <class T>
  void num(T v) {
    static_assert(std::is_arithmetic_v<T>);
    char b[sizeof v];
    std::memcpy(b, &v, sizeof v);
    state_ = hash_bytes(std::string_view(b, sizeof v), state_);
  }
  void text(std::string_view s) {
    num<std::uint64_t>(s.size());
    state_ = hash_bytes(s, state_);
  }
  std::string str() const;

 private:
  std::uint64_t state_ = 0xcbf29ce484222325ull;
};

}  // namespace ts::store::detail

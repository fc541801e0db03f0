// Stable (platform- and run-independent) hashing for structural hashes and cache keys.
#pragma once

#include <cstdint>
#include <string_view>

namespace ts {

// 64-bit FNV-1a over bytes.
std::uint64_t hash_bytes(std::string_view bytes, std::uint64_t seed = 0xcbf29ce484222325ull);

// Order-dependent combination of two hashes.
inline std::uint64_t hash_combine(std::uint64_t a, std::uint64_t b) {
  return a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
}

}  // namespace ts

#include "tilesweep/sweep/sample.h"

#include <algorithm>

#include "tilesweep/base/hash.h"

namespace ts::sweep {

namespace {

// SplitMix64's finalizer: a well-mixed 64-bit value from any input.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// floor(k * size / n) without overflow for the sizes a space can have (< 2^63).
std::int64_t stratum_start(std::int64_t k, std::int64_t size, std::int64_t n) {
  return static_cast<std::int64_t>(static_cast<__int128>(k) * size / n);
}

}  // namespace

SpaceSample::SpaceSample(const std::vector<lower::CandidateSpace::Section>& sections,
                         std::int64_t per_section, std::uint64_t seed)
    : seed_(seed) {
  for (const auto& s : sections) {
    std::int64_t n = per_section > 0 ? std::min(per_section, s.size) : s.size;
    parts_.push_back({size_, n, s});
    size_ += n;
    space_size_ += s.size;
  }
}

std::int64_t SpaceSample::index(std::int64_t position) const {
  auto it = std::upper_bound(parts_.begin(), parts_.end(), position,
                             [](std::int64_t p, const Part& part) { return p < part.first; });
  const Part& part = *(it - 1);
  std::int64_t k = position - part.first;
  if (!part.sampled()) return part.section.first + k;
  std::int64_t lo = stratum_start(k, part.section.size, part.count);
  std::int64_t hi = stratum_start(k + 1, part.section.size, part.count);
  std::uint64_t draw =
      mix(hash_combine(hash_combine(seed_, static_cast<std::uint64_t>(part.section.first)),
                       static_cast<std::uint64_t>(k)));
  return part.section.first + lo +
         static_cast<std::int64_t>(draw % static_cast<std::uint64_t>(hi - lo));
}

std::optional<std::int64_t> SpaceSample::position(std::int64_t index) const {
  auto it = std::upper_bound(parts_.begin(), parts_.end(), index,
                             [](std::int64_t i, const Part& p) { return i < p.section.first; });
  if (it == parts_.begin()) return std::nullopt;
  const Part& part = *(it - 1);
  const std::int64_t r = index - part.section.first;
  if (r < 0 || r >= part.section.size) return std::nullopt;
  if (!part.sampled()) return part.first + r;
  // The stratum holding r (strata are floor(k * size / count) apart), then its one draw.
  auto k = static_cast<std::int64_t>(static_cast<__int128>(r) * part.count / part.section.size);
  while (k + 1 < part.count && stratum_start(k + 1, part.section.size, part.count) <= r) ++k;
  while (k > 0 && stratum_start(k, part.section.size, part.count) > r) --k;
  if (this->index(part.first + k) != index) return std::nullopt;
  return part.first + k;
}

}  // namespace ts::sweep

// Which candidates of a space a sweep scores. A section (a variant's fused or unfused form) with
// at most `per_section` candidates is scored whole; a larger one by a stratified sample of
// `per_section` candidates: its index range cut into that many equal strata, one candidate from
// each at a position drawn from the job's seed. The draw depends only on (seed, section, stratum),
// so every rank, thread count and resumed run scores the same candidates.
//
// Positions 0 .. size() - 1 number the scored candidates in increasing index order: work units
// are ranges of positions, as they are ranges of indices when nothing is sampled.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tilesweep/lower/candidate_space.h"

namespace ts::sweep {

class SpaceSample {
 public:
  struct Part {
    std::int64_t first = 0, count = 0;  // positions
    lower::CandidateSpace::Section section;
    bool sampled() const { return count < section.size; }
  };

  SpaceSample() = default;
  // per_section <= 0: every candidate.
  SpaceSample(const std::vector<lower::CandidateSpace::Section>& sections, std::int64_t per_section,
              std::uint64_t seed);

  std::int64_t size() const { return size_; }              // candidates scored
  std::int64_t space_size() const { return space_size_; }  // candidates in the space
  bool sampled() const { return size_ < space_size_; }
  const std::vector<Part>& parts() const { return parts_; }
  std::int64_t index(std::int64_t position) const;  // candidate index at a position
  // The position of candidate `index`; nullopt when it is not scored (its stratum drew another).
  std::optional<std::int64_t> position(std::int64_t index) const;

 private:
  std::vector<Part> parts_;
  std::int64_t size_ = 0, space_size_ = 0;
  std::uint64_t seed_ = 0;
};

}  // namespace ts::sweep

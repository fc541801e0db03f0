// The sampled view of a candidate space: whole sections below the budget, one seeded candidate
// per stratum above it, increasing with the position and the same for the same seed.
#include "tilesweep/sweep/sample.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace ts::sweep {
namespace {

using Section = lower::CandidateSpace::Section;

const std::vector<Section> kSections = {{0, false, 0, 10}, {0, true, 10, 1000}, {1, true, 1010, 7}};

TEST(SpaceSample, WholeSpaceWithoutABudget) {
  SpaceSample s(kSections, 0, 1);
  EXPECT_FALSE(s.sampled());
  EXPECT_EQ(s.size(), 1017);
  for (std::int64_t p : {0, 9, 10, 500, 1016}) EXPECT_EQ(s.index(p), p);
}

TEST(SpaceSample, OneCandidatePerStratumAboveTheBudget) {
  SpaceSample s(kSections, 100, 7);
  EXPECT_TRUE(s.sampled());
  EXPECT_EQ(s.size(), 10 + 100 + 7);
  EXPECT_EQ(s.space_size(), 1017);
  ASSERT_EQ(s.parts().size(), 3u);
  EXPECT_FALSE(s.parts()[0].sampled());
  EXPECT_TRUE(s.parts()[1].sampled());
  for (std::int64_t p = 0; p < 10; ++p) EXPECT_EQ(s.index(p), p);  // small sections whole
  for (std::int64_t p = 110; p < 117; ++p) EXPECT_EQ(s.index(p), 1010 + (p - 110));
  std::int64_t previous = -1;
  std::set<std::int64_t> strata;
  for (std::int64_t k = 0; k < 100; ++k) {
    std::int64_t i = s.index(10 + k);
    EXPECT_GE(i, 10 + 10 * k) << k;  // inside its stratum [10k, 10k + 10) of the section
    EXPECT_LT(i, 10 + 10 * k + 10) << k;
    EXPECT_GT(i, previous);
    previous = i;
    strata.insert((i - 10) % 10);
  }
  EXPECT_GT(strata.size(), 5u);  // the draw moves within the strata, not a fixed stride
}

TEST(SpaceSample, TheSeedDecidesTheDraw) {
  SpaceSample a(kSections, 100, 7), b(kSections, 100, 7), c(kSections, 100, 8);
  int differ = 0;
  for (std::int64_t p = 0; p < a.size(); ++p) {
    EXPECT_EQ(a.index(p), b.index(p));
    differ += a.index(p) != c.index(p);
  }
  EXPECT_GT(differ, 50);
}

// position() inverts index() on the scored candidates and says which are not scored: every index
// of the space, sampled or not, against the positions that draw it.
TEST(SpaceSample, PositionInvertsIndex) {
  const std::pair<std::int64_t, std::uint64_t> cases[] = {{0, 1}, {100, 7}, {3, 2}, {999, 5}};
  for (const auto& [per_section, seed] : cases) {
    SCOPED_TRACE(per_section);
    SpaceSample s(kSections, per_section, seed);
    std::map<std::int64_t, std::int64_t> drawn;  // index -> position
    for (std::int64_t p = 0; p < s.size(); ++p) drawn[s.index(p)] = p;
    for (std::int64_t i = 0; i < s.space_size(); ++i) {
      auto it = drawn.find(i);
      if (it == drawn.end())
        EXPECT_EQ(s.position(i), std::nullopt) << i;
      else
        EXPECT_EQ(s.position(i), it->second) << i;
    }
    EXPECT_EQ(s.position(-1), std::nullopt);
    EXPECT_EQ(s.position(s.space_size()), std::nullopt);
  }
}

}  // namespace
}  // namespace ts::sweep

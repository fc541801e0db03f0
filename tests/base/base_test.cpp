// base: SmallVector (inline storage, growth, copies and moves, element lifetimes), the
// suggestions for misspelled names, error locations, hashing.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tilesweep/base/error.h"
#include "tilesweep/base/hash.h"
#include "tilesweep/base/small_vector.h"
#include "tilesweep/base/suggest.h"

namespace ts {
namespace {

// Counts the live instances, so that a leak or a double destruction shows.
struct Counted {
  static inline int live = 0;
  std::string value;
  explicit Counted(std::string v = "") : value(std::move(v)) { ++live; }
  Counted(const Counted& o) : value(o.value) { ++live; }
  Counted(Counted&& o) noexcept : value(std::move(o.value)) { ++live; }
  Counted& operator=(const Counted&) = default;
  Counted& operator=(Counted&&) = default;
  ~Counted() { --live; }
  bool operator==(const Counted& o) const { return value == o.value; }
};

std::vector<std::string> values(const SmallVector<Counted, 2>& v) {
  std::vector<std::string> out;
  for (const auto& x : v) out.push_back(x.value);
  return out;
}

// Sizes around the inline capacity (2): inline, exactly full, on the heap, after regrowing.
class SmallVectorSize : public ::testing::TestWithParam<int> {};

TEST_P(SmallVectorSize, CopiesMovesAndDestroysEveryElement) {
  int n = GetParam();
  {
    SmallVector<Counted, 2> v;
    std::vector<std::string> expected;
    for (int i = 0; i < n; ++i) {
      v.emplace_back(std::to_string(i));
      expected.push_back(std::to_string(i));
    }
    EXPECT_EQ(static_cast<int>(v.size()), n);
    EXPECT_EQ(values(v), expected);
    SmallVector<Counted, 2> copy = v;
    EXPECT_TRUE(copy == v);
    SmallVector<Counted, 2> moved = std::move(copy);
    EXPECT_EQ(values(moved), expected);
    EXPECT_TRUE(copy.empty());  // NOLINT: a moved-from SmallVector is empty
    SmallVector<Counted, 2> assigned;
    assigned.emplace_back("old");
    assigned = std::move(moved);
    EXPECT_EQ(values(assigned), expected);
    assigned = v;
    EXPECT_EQ(values(assigned), expected);
    EXPECT_EQ(Counted::live, 2 * n);  // v and assigned
    v.clear();
    EXPECT_EQ(Counted::live, n);
  }
  EXPECT_EQ(Counted::live, 0);
}

INSTANTIATE_TEST_SUITE_P(Sizes, SmallVectorSize, ::testing::Values(0, 1, 2, 3, 5, 17));

TEST(SmallVector, PushingAnOwnElementAtCapacity) {
  SmallVector<std::string, 2> v = {"a", "b"};
  v.push_back(v.front());  // grows while the argument refers into the old storage
  v.push_back(v.back());
  EXPECT_EQ(v, (SmallVector<std::string, 2>{"a", "b", "a", "a"}));
}

TEST(SmallVector, AssignReserveAndConversions) {
  SmallVector<int, 3> v(4, 7);
  EXPECT_EQ(v, (SmallVector<int, 3>{7, 7, 7, 7}));
  v.assign(2, 1);
  EXPECT_EQ(v, (SmallVector<int, 3>{1, 1}));
  v.reserve(100);
  EXPECT_EQ(v, (SmallVector<int, 3>{1, 1}));
  std::vector<long> wide = {1, 2, 3, 4, 5};
  SmallVector<int, 3> from_vector(wide);
  SmallVector<int, 3> from_range(wide.begin() + 1, wide.end());
  EXPECT_EQ(from_vector, (SmallVector<int, 3>{1, 2, 3, 4, 5}));
  EXPECT_EQ(from_range, (SmallVector<int, 3>{2, 3, 4, 5}));
  EXPECT_FALSE(from_range == from_vector);
  from_range = {9};
  EXPECT_EQ(from_range.front(), 9);
  EXPECT_EQ(from_range.back(), 9);
}

TEST(SmallVector, HoldsOverAlignedAndMoveOnlyTypes) {
  struct alignas(64) Wide {
    double x = 0;
  };
  SmallVector<Wide, 1> w;
  for (int i = 0; i < 5; ++i) w.push_back(Wide{static_cast<double>(i)});
  for (const auto& x : w) EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&x) % 64, 0u);
  SmallVector<std::unique_ptr<int>, 1> owned;
  owned.push_back(std::make_unique<int>(1));
  owned.push_back(std::make_unique<int>(2));
  SmallVector<std::unique_ptr<int>, 1> taken = std::move(owned);
  EXPECT_EQ(*taken[1], 2);
}

struct SuggestCase {
  const char* name;
  std::vector<std::string> candidates;
  const char* closest;  // "" when nothing is close enough
};

void PrintTo(const SuggestCase& c, std::ostream* os) { *os << c.name; }

class Suggest : public ::testing::TestWithParam<SuggestCase> {};

TEST_P(Suggest, ClosestName) {
  const SuggestCase& c = GetParam();
  EXPECT_EQ(closest_name(c.name, c.candidates), c.closest);
  EXPECT_EQ(did_you_mean(c.name, c.candidates).empty(), std::string(c.closest).empty());
}

INSTANTIATE_TEST_SUITE_P(
    Names, Suggest,
    ::testing::Values(SuggestCase{"tragets", {"targets", "kernel", "seed"}, "targets"},
                      SuggestCase{"shapez", {"shape", "shapes"}, "shape"},  // a tie: the first
                      SuggestCase{"xy", {"x", "xyz"}, ""},                  // too short to guess
                      SuggestCase{"banana", {"targets", "seed"}, ""}, SuggestCase{"seed", {}, ""}));

TEST(Errors, LocationsReadAsFileLineCol) {
  EXPECT_EQ(format_loc({"a.py", 3, 7}), "a.py:3:7");
  EXPECT_EQ(format_loc({"a.py", 3, 0}), "a.py:3");
  EXPECT_EQ(format_loc({"a.py", 0, 0}), "a.py");
  UserError e({"job.toml", 2, 1}, "unknown key 'x'");
  EXPECT_EQ(e.message(), "unknown key 'x'");
  EXPECT_NE(std::string(e.what()).find("job.toml:2:1"), std::string::npos) << e.what();
  EXPECT_THROW(fail({"k.py", 1, 1}, "bad {}", 1), UserError);
  EXPECT_EQ(std::string(InternalError("x").what()), "internal error: x");
}

TEST(Hash, StableAndSeeded) {
  EXPECT_EQ(hash_bytes("abc"), hash_bytes(std::string("abc")));
  EXPECT_NE(hash_bytes("abc"), hash_bytes("abd"));
  EXPECT_NE(hash_bytes("abc", 1), hash_bytes("abc", 2));
  EXPECT_NE(hash_combine(1, 2), hash_combine(2, 1));
}

}  // namespace
}  // namespace ts

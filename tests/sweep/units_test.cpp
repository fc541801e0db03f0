// Work units and the wire format between ranks.
#include "tilesweep/sweep/units.h"

#include <gtest/gtest.h>

#include "tilesweep/base/error.h"
#include "tilesweep/sweep/wire.h"

namespace ts::sweep {
namespace {

TEST(Units, CutsEverySpaceInJobOrder) {
  auto u = cut_units({130, 0, 64, 1}, 64);
  ASSERT_EQ(u.size(), 5u);
  std::vector<std::tuple<std::int64_t, int, std::int64_t, std::int64_t>> want = {
      {0, 0, 0, 64}, {1, 0, 64, 64}, {2, 0, 128, 2}, {3, 2, 0, 64}, {4, 3, 0, 1}};
  for (std::size_t i = 0; i < u.size(); ++i)
    EXPECT_EQ(std::tuple(u[i].id, u[i].space, u[i].first, u[i].count), want[i]) << i;
}

TEST(Units, EmptyJobHasNoUnits) { EXPECT_TRUE(cut_units({0, 0}, 8).empty()); }

TEST(Wire, RoundTripsAUnit) {
  store::UnitResult u;
  u.progress = {7, "matmul", "trn1", "M=256", "2x2", "M:x,K:y+rs", 64, 64, 3, 0.25, 64};
  store::CandidateRecord r;
  r.kernel = "matmul", r.config = "block 2, tile 128x512", r.feasible = true, r.latency_ns = 123.5;
  r.mesh = "2x2", r.sharding = "M:x,K:y+rs", r.compute_ns = 100.25, r.collective_ns = 23.25;
  r.busy_ns = {1, 2, 3, 4, 5}, r.index = 70, r.unit = 7, r.rank = 3, r.reason = "";
  u.candidates = {r, r};
  u.candidates[1].index = -1, u.candidates[1].reason = "unit summary", u.candidates[1].choice = 9;
  store::UnitResult back = decode_unit(encode_unit(u));
  EXPECT_EQ(back.progress.unit, 7);
  EXPECT_EQ(back.progress.shape, "M=256");
  EXPECT_EQ(back.progress.sharding, "M:x,K:y+rs");
  EXPECT_DOUBLE_EQ(back.progress.seconds, 0.25);
  ASSERT_EQ(back.candidates.size(), 2u);
  EXPECT_EQ(back.candidates[0].config, "block 2, tile 128x512");
  EXPECT_DOUBLE_EQ(back.candidates[0].latency_ns, 123.5);
  EXPECT_DOUBLE_EQ(back.candidates[0].compute_ns, 100.25);
  EXPECT_DOUBLE_EQ(back.candidates[0].collective_ns, 23.25);
  EXPECT_EQ(back.candidates[0].mesh, "2x2");
  EXPECT_EQ(back.candidates[0].sharding, "M:x,K:y+rs");
  EXPECT_EQ(back.candidates[0].busy_ns[4], 5);
  EXPECT_EQ(back.candidates[1].choice, 9);
  EXPECT_EQ(back.candidates[1].reason, "unit summary");
}

TEST(Wire, RefusesATruncatedMessage) {
  store::UnitResult u;
  u.candidates.resize(1);
  std::string bytes = encode_unit(u);
  EXPECT_THROW(decode_unit(bytes.substr(0, bytes.size() - 3)), InternalError);
}

}  // namespace
}  // namespace ts::sweep

#include "tilesweep/mesh/collective.h"

#include <gtest/gtest.h>

namespace ts::mesh {
namespace {

constexpr Collective kAll[] = {Collective::AllGather, Collective::ReduceScatter,
                               Collective::AllReduce, Collective::AllToAll};

Topology trn2(TopologyKind kind) { return topology_for(target::builtin_target("trn2"), kind); }

TEST(Collective, BusFactorsExact) {
  struct Case {
    int r;
    double all_reduce, others;
  } cases[] = {{1, 0, 0}, {2, 1.0, 0.5}, {4, 1.5, 0.75}, {8, 1.75, 0.875}, {16, 1.875, 0.9375}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.r);
    EXPECT_EQ(bus_factor(Collective::AllReduce, c.r), c.all_reduce);
    EXPECT_EQ(bus_factor(Collective::AllGather, c.r), c.others);
    EXPECT_EQ(bus_factor(Collective::ReduceScatter, c.r), c.others);
    EXPECT_EQ(bus_factor(Collective::AllToAll, c.r), c.others);
  }
}

TEST(Collective, CostReportsBusBytes) {
  const double bytes = 1 << 20;
  for (int r : {2, 4, 8, 16})
    for (Collective c : kAll) {
      SCOPED_TRACE(fmt::format("{} r={}", collective_name(c), r));
      CollectiveCost k = collective_cost(c, bytes, contiguous_group(r), trn2(TopologyKind::Torus));
      double factor = c == Collective::AllReduce ? 2.0 * (r - 1) / r : double(r - 1) / r;
      EXPECT_DOUBLE_EQ(k.bus_bytes, factor * bytes);
      EXPECT_GT(k.ns, 0);
    }
}

TEST(Collective, OneDeviceCostsNothing) {
  for (Collective c : kAll) {
    CollectiveCost k = collective_cost(c, 1e9, contiguous_group(1), trn2(TopologyKind::Torus));
    EXPECT_EQ(k.ns, 0);
    EXPECT_EQ(k.bus_bytes, 0);
    EXPECT_EQ(k.algorithm, "none");
    EXPECT_EQ(k.steps, 0);
  }
}

// Ring all-gather of 4 chips on a 16-chip physical ring: 3 steps, each closing the ring over
// 3 hops (4500 ns) and moving bytes/4 over 2 lanes (both directions) of 256 GB/s.
TEST(Collective, RingIsAlphaBeta) {
  const double bytes = 4e6;
  std::vector<CollectiveCost> all =
      collective_costs(Collective::AllGather, bytes, contiguous_group(4), trn2(TopologyKind::Ring));
  ASSERT_EQ(all.front().algorithm, "ring");
  EXPECT_EQ(all.front().steps, 3);
  EXPECT_DOUBLE_EQ(all.front().ns, 3 * (3 * 1500 + 1e6 / (2 * 256e9) * 1e9));
  CollectiveCost ar =
      collective_costs(Collective::AllReduce, bytes, contiguous_group(4), trn2(TopologyKind::Ring))
          .front();
  EXPECT_EQ(ar.steps, 6);
  EXPECT_DOUBLE_EQ(ar.ns, 2 * all.front().ns);
}

// Small messages take a few-step algorithm, large ones the bandwidth-optimal ring.
TEST(Collective, AlgorithmFollowsMessageSize) {
  struct Case {
    TopologyKind kind;
    Collective c;
    double bytes;
    const char* algorithm;
  } cases[] = {
      {TopologyKind::Torus, Collective::AllReduce, 1024, "recursive-doubling"},
      {TopologyKind::Torus, Collective::AllReduce, 1e9, "ring"},
      {TopologyKind::Torus, Collective::AllGather, 1024, "mesh"},  // one step, at most 4 hops
      {TopologyKind::Torus, Collective::AllGather, 1e9, "ring"},
      {TopologyKind::Torus, Collective::ReduceScatter, 1024, "mesh"},
      {TopologyKind::Ring, Collective::AllReduce, 1024, "recursive-doubling"},
      {TopologyKind::Switch, Collective::AllReduce, 1024, "mesh"},
      {TopologyKind::Switch, Collective::AllToAll, 1024, "mesh"},
      {TopologyKind::Ring, Collective::AllReduce, 1e9, "ring"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("{} {} {}", topology_name(c.kind), collective_name(c.c), c.bytes));
    EXPECT_EQ(collective_cost(c.c, c.bytes, contiguous_group(16), trn2(c.kind)).algorithm,
              c.algorithm);
  }
}

TEST(Collective, CostGrowsWithBytesAndLatencyWithHops) {
  Topology torus = trn2(TopologyKind::Torus), ring = trn2(TopologyKind::Ring),
           sw = trn2(TopologyKind::Switch);
  double prev = 0;
  for (double b = 1024; b <= 1e9; b *= 8) {
    double ns = collective_cost(Collective::AllReduce, b, contiguous_group(16), torus).ns;
    EXPECT_GT(ns, prev);
    prev = ns;
  }
  // A tiny all-reduce over a torus column (x of 4x4): 1 hop per step on the torus and on a
  // switch, 4 on a ring of 16.
  Group column = group_over(parse_mesh_shape("4x4"), {0});
  double t = collective_cost(Collective::AllReduce, 64, column, torus).ns;
  double r = collective_cost(Collective::AllReduce, 64, column, ring).ns;
  double s = collective_cost(Collective::AllReduce, 64, column, sw).ns;
  EXPECT_LT(t, r);
  EXPECT_LE(s, t);
}

// Across nodes, the hierarchical (dimension-wise) scheme keeps most bytes off EFA.
TEST(Collective, DimensionWiseAcrossNodes) {
  Group g = group_over(parse_mesh_shape("2x16"), {0, 1});
  CollectiveCost k = collective_cost(Collective::AllReduce, 1e9, g, trn2(TopologyKind::Torus));
  EXPECT_EQ(k.algorithm, "dimension-wise");
  EXPECT_EQ(k.link, LinkClass::Efa);
  std::vector<CollectiveCost> all =
      collective_costs(Collective::AllReduce, 1e9, g, trn2(TopologyKind::Torus));
  EXPECT_EQ(all.front().algorithm, "ring");
  EXPECT_LT(k.ns, all.front().ns);
}

}  // namespace
}  // namespace ts::mesh

#include "tilesweep/mesh/mesh_cost.h"

#include <gtest/gtest.h>

namespace ts::mesh {
namespace {

CollectiveCost comm(double ns) { return CollectiveCost{ns, "ring", 0, 1, LinkClass::NeuronLink}; }

TEST(MeshCost, OverlapModel) {
  struct Case {
    double compute;
    std::vector<double> comms;
    double fraction;
    double total;
  } cases[] = {
      {1000, {400}, 0, 1400}, {1000, {400}, 1, 1000},      {1000, {400}, 0.5, 1200},
      {100, {400}, 1, 400},   {100, {300, 100}, 0.5, 400}, {1000, {}, 1, 1000},
      {0, {250}, 0.75, 250},
  };
  for (const Case& c : cases) {
    std::vector<CollectiveCost> cs;
    for (double ns : c.comms) cs.push_back(comm(ns));
    MeshCost m = combine(c.compute, cs, Overlap{c.fraction});
    EXPECT_DOUBLE_EQ(m.total_ns, c.total);
    EXPECT_DOUBLE_EQ(m.exposed_comm_ns, c.total - c.compute);
    EXPECT_EQ(m.collectives.size(), c.comms.size());
  }
  EXPECT_DOUBLE_EQ(Overlap::pipelined(4).fraction, 0.75);
  EXPECT_DOUBLE_EQ(Overlap::pipelined(1).fraction, 0);
  EXPECT_THROW(combine(1, {}, Overlap{1.5}), InternalError);
}

TEST(MeshCost, ShardedMatmul) {
  MeshShape mesh = parse_mesh_shape("4");
  Topology t = topology_for(target::builtin_target("trn2"));
  std::vector<CollectiveUse> uses{{Collective::AllReduce, {0}, 256 * 1024 * 4, 0}};
  MeshCost none = mesh_cost(5000, uses, mesh, t);
  CollectiveCost direct =
      collective_cost(Collective::AllReduce, 256 * 1024 * 4, group_over(mesh, {0}), t);
  EXPECT_DOUBLE_EQ(none.comm_ns, direct.ns);
  EXPECT_DOUBLE_EQ(none.total_ns, 5000 + direct.ns);
  MeshCost hidden = mesh_cost(5000, uses, mesh, t, Overlap::pipelined(8));
  EXPECT_LT(hidden.total_ns, none.total_ns);
  EXPECT_GE(hidden.total_ns, 5000);
  EXPECT_DOUBLE_EQ(mesh_cost(5000, {}, mesh, t).total_ns, 5000);
}

}  // namespace
}  // namespace ts::mesh

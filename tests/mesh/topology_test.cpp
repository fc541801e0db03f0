#include "tilesweep/mesh/topology.h"

#include <gtest/gtest.h>

namespace ts::mesh {
namespace {

Topology trn2(TopologyKind kind) { return topology_for(target::builtin_target("trn2"), kind); }

TEST(Topology, FromTargetMeshSection) {
  Topology t = topology_for(target::builtin_target("trn2"));
  EXPECT_EQ(t.kind, TopologyKind::Torus);
  EXPECT_EQ(t.chips_per_node, 16);
  EXPECT_EQ(t.torus_rows, 4);
  EXPECT_EQ(t.torus_cols, 4);
  EXPECT_EQ(t.links_per_device, 4);
  EXPECT_DOUBLE_EQ(t.link_bytes_per_s, 256e9);
  EXPECT_DOUBLE_EQ(t.hop_latency_ns, 1500);
  EXPECT_DOUBLE_EQ(t.efa_latency_ns, 15000);
  EXPECT_DOUBLE_EQ(t.efa_bytes_per_s, 400e9 / 16);
  EXPECT_EQ(topology_for(target::builtin_target("trn3")).kind, TopologyKind::Switch);
  EXPECT_EQ(topology_for(target::builtin_target("trn1")).kind, TopologyKind::Torus);
}

TEST(Topology, ParsesKinds) {
  EXPECT_EQ(parse_topology("ring"), TopologyKind::Ring);
  EXPECT_EQ(parse_topology("torus"), TopologyKind::Torus);
  EXPECT_EQ(parse_topology("switch"), TopologyKind::Switch);
  try {
    parse_topology("mesh");
    ADD_FAILURE() << "accepted";
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), "unknown topology 'mesh'; use ring, torus or switch");
  }
}

// Hops and latency between two chips of one trn2 node (ids row-major on the 4x4 torus).
TEST(Topology, PathHopsRingTorusSwitch) {
  struct Case {
    int a, b;
    int ring, torus, sw;
  } cases[] = {
      {0, 1, 1, 1, 1},  {0, 3, 3, 1, 1},  {0, 4, 4, 1, 1}, {0, 5, 5, 2, 1},
      {0, 10, 6, 4, 1}, {0, 15, 1, 2, 1}, {0, 8, 8, 2, 1}, {6, 6, 0, 0, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("{} -> {}", c.a, c.b));
    EXPECT_EQ(trn2(TopologyKind::Ring).path(c.a, c.b).hops, c.ring);
    EXPECT_EQ(trn2(TopologyKind::Torus).path(c.a, c.b).hops, c.torus);
    EXPECT_EQ(trn2(TopologyKind::Switch).path(c.a, c.b).hops, c.sw);
    EXPECT_DOUBLE_EQ(trn2(TopologyKind::Torus).path(c.a, c.b).latency_ns, 1500.0 * c.torus);
  }
}

// The worst hop count between ring neighbours for a collective over one mesh axis.
TEST(Topology, GroupRingHops) {
  MeshShape m = parse_mesh_shape("4x4");
  struct Case {
    std::vector<int> axes;
    int ring, torus, sw;
  } cases[] = {
      {{1}, 3, 1, 1},     // y: 4 neighbours in a torus row; a ring closes over 3 hops
      {{0}, 4, 1, 1},     // x: a torus column; stride 4 on a ring
      {{0, 1}, 1, 1, 1},  // all 16: the ring itself; a snake Hamiltonian cycle on the torus
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.axes.size());
    Group g = group_over(m, c.axes);
    EXPECT_EQ(trn2(TopologyKind::Ring).ring_hops(g), c.ring);
    EXPECT_EQ(trn2(TopologyKind::Torus).ring_hops(g), c.torus);
    EXPECT_EQ(trn2(TopologyKind::Switch).ring_hops(g), c.sw);
  }
}

TEST(Topology, LinkClasses) {
  Topology t = trn2(TopologyKind::Torus);
  MeshShape m = parse_mesh_shape("2x16");  // x spans two trn2.48xlarge nodes
  EXPECT_EQ(t.link_class(group_over(m, {1})), LinkClass::NeuronLink);
  EXPECT_EQ(t.link_class(group_over(m, {0})), LinkClass::Efa);
  EXPECT_EQ(t.link_class(group_over(m, {0, 1})), LinkClass::Efa);
  Path efa = t.path(0, 16);
  EXPECT_EQ(efa.link, LinkClass::Efa);
  EXPECT_DOUBLE_EQ(efa.latency_ns, 15000);
  EXPECT_DOUBLE_EQ(efa.bytes_per_s, 25e9);

  // Mesh devices = NeuronCores, 2 per chip: cores 0 and 1 share a chip.
  const target::Target& target = target::builtin_target("trn2");
  Topology cores = topology_for(target, std::nullopt, 2);
  Path chip = cores.path(0, 1);
  EXPECT_EQ(chip.link, LinkClass::IntraChip);
  EXPECT_DOUBLE_EQ(chip.latency_ns, target.dma.start_ns);
  EXPECT_DOUBLE_EQ(chip.bytes_per_s, target.chip.hbm_bytes_per_s / 2);
  EXPECT_EQ(cores.path(1, 2).link, LinkClass::NeuronLink);
  EXPECT_EQ(cores.link_class(contiguous_group(2)), LinkClass::IntraChip);
  EXPECT_THROW(topology_for(target, std::nullopt, 3), UserError);
}

TEST(Group, RingOrderIsASnake) {
  Group g = group_over(parse_mesh_shape("3x3"), {0, 1});
  EXPECT_EQ(g.members(), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(g.ring_order(), (std::vector<int>{0, 1, 2, 5, 4, 3, 6, 7, 8}));
  EXPECT_EQ(group_over(parse_mesh_shape("2x4"), {0}).members(), (std::vector<int>{0, 4}));
  EXPECT_EQ(g.along(1).members(), (std::vector<int>{0, 1, 2}));
}

}  // namespace
}  // namespace ts::mesh

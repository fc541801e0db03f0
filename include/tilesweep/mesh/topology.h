// The physical network under a device mesh, built from a target's [mesh] section: chips grouped
// into nodes (instances / UltraServers) of `devices_per_node` chips wired as a ring, a 2-D torus
// or through a switch; nodes joined by EFA. Three link classes: intra-chip (when the mesh
// devices are NeuronCores of one chip), NeuronLink (chips of one node), EFA (different nodes).
//
// Model (an α–β network, no contention between concurrent transfers):
// - mesh device d is chip d / devices_per_chip; chips fill nodes in order; inside a node chip c
//   sits at torus position (c / cols, c % cols), rows x cols = devices_per_node, cols the largest
//   divisor <= sqrt (4x4 for 16 chips; ASSUMPTION: the instance numbering is row-major);
// - a NeuronLink path of h hops costs h * intra_hop_latency_ns (cut-through) and one link's
//   bandwidth; ring: shorter way round; torus: wrap-around distance per dim; switch: 1 hop;
// - EFA: inter_node_latency_ns, efa_bytes_per_s / devices_per_node per chip (one NIC per chip);
// - intra-chip: the chip's DMA start latency and half its HBM bandwidth (a copy reads and
//   writes HBM; ASSUMPTION, no published figure).
#pragma once

#include <optional>
#include <string_view>

#include "tilesweep/mesh/group.h"
#include "tilesweep/target/target.h"

namespace ts::mesh {

enum class TopologyKind { Ring, Torus, Switch };
enum class LinkClass { IntraChip, NeuronLink, Efa };

const char* topology_name(TopologyKind k);
const char* link_class_name(LinkClass c);
// "ring" | "torus" | "switch"; anything else is a UserError at `loc`.
TopologyKind parse_topology(std::string_view text, const SourceLoc& loc = {});

// The path between two devices.
struct Path {
  LinkClass link = LinkClass::NeuronLink;
  int hops = 0;  // 0 for a device to itself
  double latency_ns = 0;
  double bytes_per_s = 0;  // one link (lane) of this path
};

struct Topology {
  TopologyKind kind = TopologyKind::Ring;
  int devices_per_chip = 1;
  int chips_per_node = 1;
  int torus_rows = 1, torus_cols = 1;
  int links_per_device = 1;
  double link_bytes_per_s = 0, hop_latency_ns = 0;
  double efa_latency_ns = 0, efa_bytes_per_s = 0;    // per chip
  double chip_latency_ns = 0, chip_bytes_per_s = 0;  // intra-chip

  Path path(int a, int b) const;
  // How many NeuronLink lanes a collective over `g` can drive per device: the links facing the
  // physical dims the group spans (2 per torus dim or on a ring, both directions; every link
  // into a switch), at most links_per_device; 1 for a pair of devices on a ring or torus.
  int lanes(const Group& g) const;
  // Lanes one point-to-point transfer drives: every link into a switch, else one.
  int pair_lanes() const { return kind == TopologyKind::Switch ? links_per_device : 1; }
  // The order a ring over g visits its members: row-major or snake (Group::ring_order),
  // whichever has the fewer hops between ring neighbours (row-major on a ring of chips, the
  // snake on a torus).
  std::vector<int> ring_order(const Group& g) const;
  // The largest hop count between ring neighbours of g (ring_order, wrapping round).
  int ring_hops(const Group& g) const;
  // The slowest link class any two members of g talk over.
  LinkClass link_class(const Group& g) const;
};

// The topology of `target`'s mesh; `kind` overrides the target's (a job's [mesh] topology);
// devices_per_chip > 1 makes the mesh devices NeuronCores (must divide the chip's cores).
Topology topology_for(const target::Target& target, std::optional<TopologyKind> kind = {},
                      int devices_per_chip = 1);

}  // namespace ts::mesh

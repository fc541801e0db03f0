#include "tilesweep/mesh/topology.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

namespace ts::mesh {

const char* topology_name(TopologyKind k) {
  switch (k) {
    case TopologyKind::Ring:
      return "ring";
    case TopologyKind::Torus:
      return "torus";
    case TopologyKind::Switch:
      return "switch";
  }
  return "?";
}

const char* link_class_name(LinkClass c) {
  switch (c) {
    case LinkClass::IntraChip:
      return "intra-chip";
    case LinkClass::NeuronLink:
      return "neuronlink";
    case LinkClass::Efa:
      return "efa";
  }
  return "?";
}

TopologyKind parse_topology(std::string_view text, const SourceLoc& loc) {
  for (TopologyKind k : {TopologyKind::Ring, TopologyKind::Torus, TopologyKind::Switch})
    if (text == topology_name(k)) return k;
  fail(loc, "unknown topology '{}'; use ring, torus or switch", text);
}

namespace {

int ring_distance(int a, int b, int n) {
  int d = std::abs(a - b) % n;
  return std::min(d, n - d);
}

}  // namespace

Path Topology::path(int a, int b) const {
  if (a == b) return Path{LinkClass::IntraChip, 0, 0, chip_bytes_per_s};
  int ca = a / devices_per_chip, cb = b / devices_per_chip;
  if (ca == cb) return Path{LinkClass::IntraChip, 1, chip_latency_ns, chip_bytes_per_s};
  if (ca / chips_per_node != cb / chips_per_node)
    return Path{LinkClass::Efa, 1, efa_latency_ns, efa_bytes_per_s};
  int la = ca % chips_per_node, lb = cb % chips_per_node;
  int hops = 1;
  switch (kind) {
    case TopologyKind::Ring:
      hops = ring_distance(la, lb, chips_per_node);
      break;
    case TopologyKind::Torus:
      hops = ring_distance(la / torus_cols, lb / torus_cols, torus_rows) +
             ring_distance(la % torus_cols, lb % torus_cols, torus_cols);
      break;
    case TopologyKind::Switch:
      hops = 1;
      break;
  }
  return Path{LinkClass::NeuronLink, hops, hops * hop_latency_ns, link_bytes_per_s};
}

int Topology::lanes(const Group& g) const {
  if (kind == TopologyKind::Switch) return links_per_device;
  std::vector<int> m = g.members();
  if (m.size() <= 2) return 1;
  std::set<int> rows, cols;
  for (int d : m) {
    int local = (d / devices_per_chip) % chips_per_node;
    rows.insert(local / torus_cols);
    cols.insert(local % torus_cols);
  }
  int dims = kind == TopologyKind::Ring ? 1 : (rows.size() > 1) + (cols.size() > 1);
  return std::clamp(2 * dims, 1, links_per_device);
}

namespace {

// (worst, total) hops between ring neighbours, wrapping round.
std::pair<int, int> neighbour_hops(const Topology& t, const std::vector<int>& order) {
  int worst = 0, total = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    int h = t.path(order[i], order[(i + 1) % order.size()]).hops;
    worst = std::max(worst, h);
    total += h;
  }
  return {worst, total};
}

}  // namespace

std::vector<int> Topology::ring_order(const Group& g) const {
  std::vector<int> rows = g.members(), snake = g.ring_order();
  return neighbour_hops(*this, snake) < neighbour_hops(*this, rows) ? snake : rows;
}

int Topology::ring_hops(const Group& g) const { return neighbour_hops(*this, ring_order(g)).first; }

LinkClass Topology::link_class(const Group& g) const {
  std::vector<int> m = g.members();
  LinkClass worst = LinkClass::IntraChip;
  for (int d : m) {
    LinkClass c = path(m.front(), d).link;
    if (d != m.front() && static_cast<int>(c) > static_cast<int>(worst)) worst = c;
  }
  return worst;
}

Topology topology_for(const target::Target& target, std::optional<TopologyKind> kind,
                      int devices_per_chip) {
  const auto& m = target.mesh;
  if (devices_per_chip < 1 || target.chip.neuron_cores % devices_per_chip != 0)
    fail({}, "target {} has {} NeuronCores per chip; {} devices per chip does not divide them",
         target.name, target.chip.neuron_cores, devices_per_chip);
  Topology t;
  t.kind = kind ? *kind : parse_topology(m.topology);
  t.devices_per_chip = devices_per_chip;
  t.chips_per_node = m.devices_per_node;
  t.torus_cols = static_cast<int>(std::sqrt(static_cast<double>(m.devices_per_node)) + 1e-9);
  while (m.devices_per_node % t.torus_cols != 0) --t.torus_cols;
  t.torus_rows = m.devices_per_node / t.torus_cols;
  t.links_per_device = m.links_per_device;
  t.link_bytes_per_s = m.link_bytes_per_s;
  t.hop_latency_ns = m.intra_hop_latency_ns;
  t.efa_latency_ns = m.inter_node_latency_ns;
  t.efa_bytes_per_s = m.efa_bytes_per_s / m.devices_per_node;
  t.chip_latency_ns = target.dma.start_ns;
  t.chip_bytes_per_s = target.chip.hbm_bytes_per_s / 2;
  return t;
}

}  // namespace ts::mesh

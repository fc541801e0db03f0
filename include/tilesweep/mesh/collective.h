// α–β cost of one collective over a group of devices on a topology, with the algorithm chosen by
// cost (so by message size: few-step, latency-optimal algorithms win small messages, bandwidth-
// optimal ones large). `bytes` is the buffer each device holds: the gathered result for
// all-gather, the input for reduce-scatter, the buffer for all-reduce and all-to-all.
//
// Algorithms (r members; a step is a set of concurrent transfers, it lasts as long as its
// slowest: path latency + bytes / (lane bandwidth), no contention modelled):
// - ring: r-1 steps of bytes/r (all-reduce: 2(r-1)), around Topology::ring_order, over
//   Topology::lanes parallel lanes (bidirectional ring; both Hamiltonian cycles of a torus);
// - recursive-doubling (all-gather, all-reduce) / recursive-halving (reduce-scatter) /
//   halving-doubling (all-reduce = halving then doubling): log2 r pairwise steps, r a power of
//   two, Topology::pair_lanes per pair;
// - mesh: every device sends to every other at once (all-reduce: reduce-scatter then
//   all-gather), NeuronLink traffic weighted by hops over the group's lanes, EFA traffic over
//   the chip's NIC;
// - pairwise (all-to-all): r-1 steps, step k sends bytes/r to the member k ahead;
// - dimension-wise (groups over several mesh axes): one phase per axis, each with the best
//   one-axis algorithm, the slowest (inter-node) axis carrying the least data (reduce-scatter
//   fast to slow, all-reduce on the slowest, all-gather slow to fast: the hierarchical scheme).
// Not modelled: runtime launch overheads and the CC-core scheduling (trainium.md §5.3 floors).
#pragma once

#include <string>
#include <vector>

#include "tilesweep/mesh/group.h"
#include "tilesweep/mesh/topology.h"

namespace ts::mesh {

enum class Collective { AllGather, ReduceScatter, AllReduce, AllToAll };

const char* collective_name(Collective c);  // "all-gather", ...

// nccom-test's bus-bandwidth factor: bytes each device moves per byte of buffer. All-reduce
// 2(r-1)/r; all-gather, reduce-scatter, all-to-all (r-1)/r; 0 for r = 1.
double bus_factor(Collective c, int r);

struct CollectiveCost {
  double ns = 0;
  std::string algorithm;  // "none" when the group is one device
  double bus_bytes = 0;   // bus_factor * bytes
  int steps = 0;
  LinkClass link = LinkClass::IntraChip;  // the slowest link class used
};

// The cheapest algorithm for the collective (ties: the first in the order above). r = 1 costs 0.
CollectiveCost collective_cost(Collective c, double bytes, const Group& g, const Topology& t);
// Every algorithm that applies, in the order above (r = 1: the one "none" entry).
std::vector<CollectiveCost> collective_costs(Collective c, double bytes, const Group& g,
                                             const Topology& t);

}  // namespace ts::mesh

// The latency of a sharded kernel on a mesh: the local compute (the simulator's score of the
// kernel at its local shape, given by the caller) plus the collectives the sharding implies.
//
// Model: the collectives run one after another on the CC-cores (their times add up to comm).
// Without overlap, total = compute + comm. With overlap, a fraction f of comm can run under the
// computation (the output is produced tile by tile, and a tile's collective starts while later
// tiles compute, as in pipelined tensor parallelism); the rest, (1 - f) * comm (at least the last
// tile's collective), starts after the computation ends:
//     total = max(compute, f * comm) + (1 - f) * comm.
// f = 0 is no overlap, f = 1 perfect overlap (max(compute, comm)).
#pragma once

#include <string>
#include <vector>

#include "tilesweep/mesh/collective.h"
#include "tilesweep/mesh/sharding.h"
#include "tilesweep/mesh/topology.h"

namespace ts::mesh {

struct Overlap {
  double fraction = 0;  // f in [0, 1]

  static Overlap none() { return {0}; }
  // A collective split into `chunks` pipelined pieces overlaps all but the last: (c - 1) / c.
  static Overlap pipelined(int chunks);
};

struct MeshCost {
  double compute_ns = 0;
  double comm_ns = 0;          // sum of the collectives
  double exposed_comm_ns = 0;  // total - compute
  double total_ns = 0;
  std::vector<CollectiveCost> collectives;  // one per use, in order
};

// Combines the compute time with already costed collectives.
MeshCost combine(double compute_ns, std::vector<CollectiveCost> collectives, Overlap overlap = {});

// Costs `uses` (a ShardingChoice's collectives, gathers, or both) on topology `t` for `mesh`
// and combines them with the compute time.
MeshCost mesh_cost(double compute_ns, const std::vector<CollectiveUse>& uses, const MeshShape& mesh,
                   const Topology& t, Overlap overlap = {});

}  // namespace ts::mesh

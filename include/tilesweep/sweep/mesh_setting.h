// How a kernel runs at one (global) shape on one device mesh: a sharding (none on one device),
// the local dims each device computes with, the collectives that complete the outputs (costed
// alpha-beta on the target's topology) and the roofline of the whole kernel spread over the
// devices. The sweep builds one candidate space per setting; `tilesweep score --mesh` searches
// the same settings.
//
// A candidate's latency on the mesh is mesh::combine of its simulated local latency with the
// collectives, without overlap (mesh/mesh_cost.h): compute + the collectives, one after another.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/mesh/collective.h"
#include "tilesweep/mesh/mesh_shape.h"
#include "tilesweep/mesh/topology.h"
#include "tilesweep/sim/roofline.h"
#include "tilesweep/target/target.h"

namespace ts::sweep {

struct MeshSetting {
  std::string mesh = "1";  // canonical mesh text
  std::string sharding;    // mesh::ShardingChoice::text; "" on one device
  sem::DimEnv local;       // the dims each device computes with (the shape itself on one device)
  std::vector<mesh::CollectiveCost> collectives;  // in the choice's order
  double collective_ns = 0;                       // their sum
  sim::Roofline
      roofline;  // the whole kernel at the global shape, every bound divided by the devices

  // The mesh latency of a candidate whose simulated local latency is `compute_ns` (>= 0).
  double latency(double compute_ns) const;
};

// The settings of `kernel` at `global` on `mesh`: on one device one setting (no sharding, the
// plain roofline); otherwise one per mesh::sharding_choices(kernel, mesh, global), in that order
// ("replicate" first, so never empty). `topology` overrides the target's own (a job's [mesh]).
// The roofline is for a device's kernel on up to `cores` NeuronCores (sim::roofline), its
// scarce-operations term the least over `kernel` and `variants` (the search's rewritten kernels).
std::vector<MeshSetting> mesh_settings(const ir::Kernel& kernel, const sem::DimEnv& global,
                                       const target::Target& target, const mesh::MeshShape& mesh,
                                       std::optional<mesh::TopologyKind> topology = std::nullopt,
                                       int cores = 1,
                                       const std::vector<const ir::Kernel*>& variants = {});

}  // namespace ts::sweep

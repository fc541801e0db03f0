// Sharding choices for a kernel on a device mesh (a search dimension of the sweep): each mesh
// axis (of size > 1) either replicates the work or splits one kernel dim that dim_roles.h
// offers. Splitting a Parallel dim needs no communication (its outputs stay sharded; an
// all-gather replicates them if a caller wants); splitting a Contracted dim leaves partial
// results, combined by an all-reduce per output (or, in the "+rs" variant, a reduce-scatter
// that leaves each output sharded along its first dim).
// Text: "replicate", or "DIM:axes" per split dim in kernel dim order, axes joined by '*':
// "M:x", "M:x,N:y", "K:x*y", "K:x+rs".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/mesh/collective.h"
#include "tilesweep/mesh/dim_roles.h"
#include "tilesweep/mesh/layout.h"

namespace ts::mesh {

struct DimShard {
  std::string dim;
  std::vector<int> axes;  // mesh axes splitting it, slowest first
  DimRole role = DimRole::Parallel;
};

// One collective a choice implies, for one kernel output.
struct CollectiveUse {
  Collective kind = Collective::AllReduce;
  std::vector<int> axes;   // the mesh axes of the group
  std::int64_t bytes = 0;  // per device, collective.h's convention
  int output = 0;          // index into Kernel::outputs
};

struct ShardingChoice {
  struct Output {
    std::vector<sem::Dim> shape;
    int dtype_bytes = 4;
    std::vector<int> reduce_axes;  // axes whose partial results it must combine
  };

  std::string text;
  MeshShape mesh;
  std::vector<DimShard> shards;  // kernel dim order
  bool reduce_scatter = false;
  std::vector<Output> outputs;                   // one per Kernel::outputs
  std::vector<sem::Precondition> preconditions;  // the kernel's, checked on the local dims

  // The dims each device computes with: every split dim divided by its axes' sizes. nullopt
  // when the choice does not apply to this shape: a split that does not divide, a kernel
  // precondition failing on the local dims, or ("+rs") an output's first dim not divisible.
  // UserError when `global` lacks one of the kernel's dims.
  std::optional<sem::DimEnv> local_dims(const sem::DimEnv& global) const;
  // The collectives the outputs need to be complete (all-reduce or reduce-scatter of partial
  // results); bytes from the local output size. Only for shapes local_dims accepts.
  std::vector<CollectiveUse> collectives(const sem::DimEnv& global) const;
  // Optional all-gathers that replicate the sharded outputs (after collectives()).
  std::vector<CollectiveUse> gathers(const sem::DimEnv& global) const;
  // Each output's layout after collectives().
  std::vector<Layout> output_layouts() const;
  // The axes splitting `dim`; empty when it is not split.
  std::vector<int> axes_of(const std::string& dim) const;
};

// Every choice for the kernel on the mesh, "replicate" first, then in a fixed order
// (deterministic). Shape-independent: filter with local_dims, or use the overload below.
std::vector<ShardingChoice> sharding_choices(const ir::Kernel& kernel, const MeshShape& mesh);
// The choices that apply to the shape `global`.
std::vector<ShardingChoice> sharding_choices(const ir::Kernel& kernel, const MeshShape& mesh,
                                             const sem::DimEnv& global);

}  // namespace ts::mesh

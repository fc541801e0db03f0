#include "tilesweep/mesh/mesh_cost.h"

#include <algorithm>

namespace ts::mesh {

Overlap Overlap::pipelined(int chunks) {
  TS_CHECK(chunks >= 1, "{} chunks", chunks);
  return {static_cast<double>(chunks - 1) / chunks};
}

MeshCost combine(double compute_ns, std::vector<CollectiveCost> collectives, Overlap overlap) {
  TS_CHECK(overlap.fraction >= 0 && overlap.fraction <= 1, "overlap fraction {}", overlap.fraction);
  TS_CHECK(compute_ns >= 0, "compute time {}", compute_ns);
  MeshCost c;
  c.compute_ns = compute_ns;
  for (const CollectiveCost& k : collectives) c.comm_ns += k.ns;
  double hidden = overlap.fraction * c.comm_ns;
  c.total_ns = std::max(compute_ns, hidden) + (c.comm_ns - hidden);
  c.exposed_comm_ns = c.total_ns - compute_ns;
  c.collectives = std::move(collectives);
  return c;
}

MeshCost mesh_cost(double compute_ns, const std::vector<CollectiveUse>& uses, const MeshShape& mesh,
                   const Topology& t, Overlap overlap) {
  std::vector<CollectiveCost> costs;
  for (const CollectiveUse& u : uses)
    costs.push_back(
        collective_cost(u.kind, static_cast<double>(u.bytes), group_over(mesh, u.axes), t));
  return combine(compute_ns, std::move(costs), overlap);
}

}  // namespace ts::mesh

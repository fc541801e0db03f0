#include "tilesweep/sweep/mesh_setting.h"

#include "tilesweep/mesh/mesh_cost.h"
#include "tilesweep/mesh/sharding.h"

namespace ts::sweep {

double MeshSetting::latency(double compute_ns) const {
  if (collectives.empty()) return compute_ns;
  return mesh::combine(compute_ns, collectives, mesh::Overlap::none()).total_ns;
}

std::vector<MeshSetting> mesh_settings(const ir::Kernel& kernel, const sem::DimEnv& global,
                                       const target::Target& target, const mesh::MeshShape& mesh,
                                       std::optional<mesh::TopologyKind> topology, int cores,
                                       const std::vector<const ir::Kernel*>& variants) {
  sim::Roofline roof = sim::roofline(kernel, global, target, cores, variants);
  const int devices = mesh.devices();
  if (devices == 1) return {MeshSetting{mesh.str(), "", global, {}, 0, roof}};
  // On a mesh the bound is the whole kernel's work and traffic spread evenly over the devices.
  const double d = devices;
  roof.spread_over(d);
  const mesh::Topology topo = mesh::topology_for(target, topology);
  std::vector<MeshSetting> out;
  for (const mesh::ShardingChoice& choice : mesh::sharding_choices(kernel, mesh, global)) {
    MeshSetting s{mesh.str(), choice.text, *choice.local_dims(global), {}, 0, roof};
    s.collectives = mesh::mesh_cost(0, choice.collectives(global), mesh, topo).collectives;
    for (const auto& c : s.collectives) s.collective_ns += c.ns;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace ts::sweep

#include "tilesweep/sweep/dry_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <ostream>
#include <vector>

namespace ts::sweep {

namespace {

// The space's local shape in the kernel's dim order, "" when it is the global shape.
std::string local_text(const Plan& plan, const SpaceEntry& e) {
  Shape local = plan.job().kernels[e.kernel].shapes[e.shape];
  for (auto& [dim, size] : local) size = e.dims.at(dim);
  std::string text = shape_text(local);
  return text == e.shape_name ? "" : text;
}

}  // namespace

void print_dry_run(const Plan& plan, const std::string& archive, std::ostream& out) {
  const Job& job = plan.job();
  std::vector<std::int64_t> units(plan.spaces().size(), 0);
  for (const auto& u : plan.units()) ++units[u.space];
  std::size_t wk = 6, ws = 5, wm = 4, wh = 8;
  for (const auto& e : plan.spaces()) {
    wk = std::max(wk, e.label.size()), ws = std::max(ws, e.shape_name.size());
    wm = std::max(wm, e.setting.mesh.size()), wh = std::max(wh, e.setting.sharding.size());
  }
  std::vector<std::string> meshes;
  for (const auto& m : plan.meshes()) meshes.push_back(m.str());
  std::string topology;
  if (job.mesh)
    topology = fmt::format(" ({} topology)",
                           job.mesh->topology.empty() ? "each target's" : job.mesh->topology);
  out << fmt::format(
      "job {} (hash {}): {} kernel(s) x {} target(s), mesh {}{}, unit size {}, keep {}\n", job.name,
      job.hash(), job.kernels.size(), job.targets.size(), fmt::join(meshes, ", "), topology,
      job.search.unit_size, keep_text(job.search));
  out << fmt::format("{:<{}}  {:<6}  {:<{}}  {:<{}}  {:<{}}  {:>12}  {:>7}  {}\n", "kernel", wk,
                     "target", "shape", ws, "mesh", wm, "sharding", wh, "candidates", "units",
                     "local shape");
  for (std::size_t s = 0; s < plan.spaces().size(); ++s) {
    const auto& e = plan.spaces()[s];
    std::string line = fmt::format("{:<{}}  {:<6}  {:<{}}  {:<{}}  {:<{}}  {:>12}  {:>7}  {}",
                                   e.label, wk, e.target_name, e.shape_name, ws, e.setting.mesh, wm,
                                   e.setting.sharding.empty() ? "-" : e.setting.sharding, wh,
                                   e.sample.size(), units[s], local_text(plan, e));
    line.erase(line.find_last_not_of(' ') + 1);
    if (e.sample.sampled()) line += fmt::format("  (sampled from {})", e.space->size());
    out << line << "\n";
  }
  std::string sampled;
  if (plan.candidates() < plan.space_candidates())
    sampled = fmt::format(" (a sample of the {} in the spaces: max_section_candidates = {})",
                          plan.space_candidates(), job.search.max_section_candidates);
  out << fmt::format(
      "total: {} candidates{} in {} units over {} spaces (kernel, target, shape, mesh, sharding) "
      "of {} "
      "(kernel, target, shape, mesh); prepare took {:.1f} s\n",
      plan.candidates(), sampled, plan.units().size(), plan.spaces().size(), plan.keys(),
      plan.prepare_seconds());
  out << fmt::format("archive: {}\n", archive);
}

}  // namespace ts::sweep

#include "tilesweep/sweep/dry_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <ostream>
#include <set>
#include <vector>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/semantics/op_spec.h"
#include "tilesweep/target/target.h"

namespace ts::sweep {

namespace {

// The space's local shape in the kernel's dim order, "" when it is the global shape.
std::string local_text(const Plan& plan, const SpaceEntry& e) {
  Shape local = plan.job().kernels[e.kernel].shapes[e.shape];
  for (auto& [dim, size] : local) size = e.dims.at(dim);
  std::string text = shape_text(local);
  return text == e.shape_name ? "" : text;
}

// "job NAME (hash H): K kernel(s) x T target(s), mesh 1, 2x2 (torus topology), unit size U, keep
// K\n"
std::string job_header(const Job& job, const std::vector<mesh::MeshShape>& mesh_shapes) {
  std::vector<std::string> meshes;
  for (const auto& m : mesh_shapes) meshes.push_back(m.str());
  std::string topology;
  if (job.mesh)
    topology = fmt::format(" ({} topology)",
                           job.mesh->topology.empty() ? "each target's" : job.mesh->topology);
  return fmt::format(
      "job {} (hash {}): {} kernel(s) x {} target(s), mesh {}{}, unit size {}, keep {}\n", job.name,
      job.hash(), job.kernels.size(), job.targets.size(), fmt::join(meshes, ", "), topology,
      job.search.unit_size, keep_text(job.search));
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
  out << job_header(job, plan.meshes());
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

namespace ts::sweep {

namespace {

struct QuickRow {
  std::string kernel, target, shape, mesh, sharding, local;
};

// Distinct synthesis queries of the original kernels over the job's targets, as the plan asks
// them (its variants add more).
std::size_t synthesis_query_count(const Job& job, const std::vector<const ir::Kernel*>& kernels) {
  lower::SynthesisOptions o;
  o.max_depth = job.search.isa_depth;
  std::set<std::string> seen;
  for (const auto* k : kernels)
    for (const auto& t : job.targets)
      for (const auto& q : lower::synthesis_queries(*k, target::builtin_target(t).isa, o))
        if (q.op)
          seen.insert(lower::SynthesisCache::key(*q.op, target::builtin_target(t).isa, q.options));
  return seen.size();
}

}  // namespace

void print_quick_dry_run(const Job& job, const std::string& archive, std::ostream& out) {
  std::vector<ir::Module> modules;
  std::vector<const ir::Kernel*> kernels;
  for (const auto& jk : job.kernels) {
    modules.push_back(ir::parse_module(jk.source, jk.file, sem::OpTable::builtin()));
    kernels.push_back(&modules.back().kernel(jk.name));
  }
  std::vector<mesh::MeshShape> meshes;
  if (job.mesh)
    for (const auto& m : job.mesh->shapes) meshes.push_back(mesh::parse_mesh_shape(m.text));
  else
    meshes.push_back(mesh::MeshShape{{1}});
  std::optional<mesh::TopologyKind> topology;
  if (job.mesh && !job.mesh->topology.empty()) topology = mesh::parse_topology(job.mesh->topology);
  std::vector<QuickRow> rows;
  int keys = 0;
  for (std::size_t k = 0; k < job.kernels.size(); ++k)
    for (const auto& t : job.targets)
      for (const auto& shape : job.kernels[k].shapes)
        for (const auto& m : meshes) {
          ++keys;
          for (const auto& s :
               mesh_settings(*kernels[k], shape_env(shape), target::builtin_target(t), m, topology,
                             job.search.cores)) {
            Shape local = shape;
            for (auto& [dim, size] : local) size = s.local.at(dim);
            std::string lt = shape_text(local) == shape_text(shape) ? "" : shape_text(local);
            rows.push_back({job.kernels[k].label, t, shape_text(shape), s.mesh,
                            s.sharding.empty() ? "-" : s.sharding, lt});
          }
        }
  std::size_t wk = 6, ws = 5, wm = 4, wh = 8;
  for (const auto& r : rows)
    wk = std::max(wk, r.kernel.size()), ws = std::max(ws, r.shape.size()),
    wm = std::max(wm, r.mesh.size()), wh = std::max(wh, r.sharding.size());
  out << job_header(job, meshes);
  out << fmt::format("{:<{}}  {:<6}  {:<{}}  {:<{}}  {:<{}}  {}\n", "kernel", wk, "target", "shape",
                     ws, "mesh", wm, "sharding", wh, "local shape");
  for (const auto& r : rows) {
    std::string line = fmt::format("{:<{}}  {:<6}  {:<{}}  {:<{}}  {:<{}}  {}", r.kernel, wk,
                                   r.target, r.shape, ws, r.mesh, wm, r.sharding, wh, r.local);
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << "\n";
  }
  out << fmt::format(
      "total: {} spaces (kernel, target, shape, mesh, sharding) of {} (kernel, target, shape, "
      "mesh); "
      "{} distinct ISA synthesis queries in the original kernels (their algebraic variants add "
      "more)\n",
      rows.size(), keys, synthesis_query_count(job, kernels));
  out << "candidates and work units: not counted (the quick dry run proves and synthesizes "
         "nothing); "
         "`--dry-run --exact` runs the prepare (proofs of the variants, ISA synthesis: as long as "
         "the run's "
         "prepare) and counts them\n";
  out << fmt::format("archive: {}\n", archive);
}

}  // namespace ts::sweep

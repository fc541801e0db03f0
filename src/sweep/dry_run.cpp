#include "tilesweep/sweep/dry_run.h"

#include <algorithm>
#include <ostream>
#include <vector>

#include <fmt/format.h>

namespace ts::sweep {

void print_dry_run(const Plan& plan, const std::string& archive, std::ostream& out) {
  const Job& job = plan.job();
  std::vector<std::int64_t> units(plan.spaces().size(), 0);
  for (const auto& u : plan.units()) ++units[u.space];
  std::size_t wk = 6, ws = 5;
  for (const auto& e : plan.spaces()) wk = std::max(wk, e.label.size()), ws = std::max(ws, e.shape_name.size());
  out << fmt::format("job {} (hash {}): {} kernel(s) x {} target(s), mesh 1, unit size {}, keep {}\n", job.name,
                     job.hash(), job.kernels.size(), job.targets.size(), job.search.unit_size, keep_text(job.search));
  out << fmt::format("{:<{}}  {:<6}  {:<{}}  {:>12}  {:>7}\n", "kernel", wk, "target", "shape", ws, "candidates", "units");
  for (std::size_t s = 0; s < plan.spaces().size(); ++s) {
    const auto& e = plan.spaces()[s];
    out << fmt::format("{:<{}}  {:<6}  {:<{}}  {:>12}  {:>7}\n", e.label, wk, e.target_name, e.shape_name, ws,
                       e.space->size(), units[s]);
  }
  out << fmt::format("total: {} candidates in {} units over {} (kernel, target, shape); prepare took {:.1f} s\n",
                     plan.candidates(), plan.units().size(), plan.spaces().size(), plan.prepare_seconds());
  out << fmt::format("archive: {}\n", archive);
}

}  // namespace ts::sweep

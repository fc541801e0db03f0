// `run --dry-run`: the work a job would do — per (kernel, target, shape, mesh, sharding) its
// local shape (when sharded), candidates and work units, and the totals — without scoring
// anything. Counting candidates needs the plan, whose prepare proves the algebraic variants and
// synthesizes the instruction lowerings (the run's prepare: seconds to minutes), so a dry run
// without `--exact` and without the synthesis records of an earlier run at hand prints the
// quick form instead: the spaces from the job alone (kernels parsed, dims bound, meshes and
// shardings), the ISA synthesis queries of the original kernels, and no candidate counts.
#pragma once

#include <iosfwd>
#include <string>

#include "tilesweep/sweep/plan.h"

namespace ts::sweep {

void print_dry_run(const Plan& plan, const std::string& archive, std::ostream& out);

// The quick form, from the job alone: no proof and no synthesis search. Throws UserError for a
// kernel that does not parse or dims that do not bind (as the plan would).
void print_quick_dry_run(const Job& job, const std::string& archive, std::ostream& out);

}  // namespace ts::sweep

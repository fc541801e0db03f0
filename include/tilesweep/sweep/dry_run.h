// `run --dry-run`: the work a job would do — per (kernel, target, shape, mesh, sharding) its
// local shape (when sharded), candidates and work units, and the totals — without scoring
// anything.
#pragma once

#include <iosfwd>
#include <string>

#include "tilesweep/sweep/plan.h"

namespace ts::sweep {

void print_dry_run(const Plan& plan, const std::string& archive, std::ostream& out);

}  // namespace ts::sweep

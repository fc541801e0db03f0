// Work units of a sweep: every candidate space of a job (one per kernel x target x shape x mesh
// x sharding) cut into chunks of `unit_size` consecutive candidate indices. Unit ids number the
// chunks in job order (kernel, then target, shape, mesh, sharding, then chunk), so the same job
// always yields the same ids on every rank and in every run — what `--resume` and the journal
// rely on.
#pragma once

#include <cstdint>
#include <vector>

namespace ts::sweep {

struct WorkUnit {
  std::int64_t id = 0;
  int space = 0;           // index of its candidate space in the plan (job order)
  std::int64_t first = 0;  // first candidate index
  std::int64_t count = 0;  // candidate indices, 1 .. unit_size
};

// `sizes[s]`: candidates of space s (0 gives no unit). `unit_size` >= 1.
std::vector<WorkUnit> cut_units(const std::vector<std::int64_t>& sizes, std::int64_t unit_size);

}  // namespace ts::sweep

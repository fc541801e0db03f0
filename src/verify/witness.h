// Concrete counterexamples: runs both kernels with the reference interpreter at small dims, on
// random inputs in [-1, 1), on small integers and on zeros, and returns the first element where
// they differ beyond doubt: one side defined (finite) and the other not, or values apart by far
// more than the rounding of either side (estimated from how far each moves between float64 and
// float32 evaluation). A difference rounding could explain is never reported.
#pragma once

#include <optional>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/verify/verdict.h"

namespace ts::verify {

// Tries `hint` first (dims from a solver model, when small), then a few small assignments that
// satisfy both kernels' preconditions. `b_positions[i]` is the parameter of `a` that b's
// parameter i reads.
std::optional<Counterexample> find_witness(const ir::Kernel& a, const ir::Kernel& b,
                                           const std::vector<int>& b_positions,
                                           const std::optional<sem::DimEnv>& hint);

}  // namespace ts::verify

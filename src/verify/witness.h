// Concrete counterexamples: runs both kernels with the reference interpreter on random inputs
// at small dims and returns the first element where they differ.
#pragma once

#include <optional>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/verify/verdict.h"

namespace ts::verify {

// Tries `hint` first (dims from a solver model, when small), then a few small assignments that
// satisfy both kernels' preconditions. Elements that are not finite on both sides are skipped.
std::optional<Counterexample> find_witness(const ir::Kernel& a, const ir::Kernel& b,
                                           const std::optional<sem::DimEnv>& hint);

}  // namespace ts::verify

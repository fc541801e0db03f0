// Numeric checks of a sweep's kept candidates (`[search] check_samples`): per (kernel, target,
// shape, mesh), its best `samples` feasible candidate rows are rebuilt, run by the functional
// ISA interpreter (sim::execute) on seeded random inputs at the space's (local) shape, and
// compared with the reference interpreter in float64: |out - ref| <= 1e-4 + 1e-4 |ref| for every
// element. The functional interpreter runs the whole kernel, so checks at large shapes are slow.
#pragma once

#include <cstdint>
#include <vector>

#include "tilesweep/ir/tensor.h"
#include "tilesweep/store/schema.h"
#include "tilesweep/sweep/plan.h"

namespace ts::sweep {

struct CheckCounts {
  std::int64_t passed = 0, failed = 0;
};

// Seeded random inputs of `k` at `dims`, uniform in [0.1, 1) so that sqrt, log and rsqrt stay
// real (a scalar parameter with a default takes it): what the checks run candidates on.
std::vector<ir::Tensor> check_inputs(const ir::Kernel& k, const sem::DimEnv& dims,
                                     std::uint64_t seed);

// Sets `check` to 1 (pass) or 0 (mismatch) on the rows checked; the others keep -1.
CheckCounts check_candidates(const Plan& plan, std::vector<store::CandidateRecord>& rows,
                             std::int64_t samples, std::uint64_t seed);

}  // namespace ts::sweep

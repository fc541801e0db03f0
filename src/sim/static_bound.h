// The latency bound of lower_bound.h from instruction timings already computed (simulate()
// computes them once for both). Internal to ts_sim.
#pragma once

#include <vector>

#include "inst_timing.h"
#include "tilesweep/sim/lower_bound.h"

namespace ts::sim {

LatencyBound latency_lower_bound(const lower::Program& p, const target::Target& t,
                                 const std::vector<InstTiming>& timing);

}  // namespace ts::sim

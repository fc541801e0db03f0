#include "tilesweep/sim/lower_bound.h"

#include <algorithm>
#include <vector>

#include "static_bound.h"
#include "tilesweep/sim/cores.h"

namespace ts::sim {

LatencyBound latency_lower_bound(const lower::Program& p, const target::Target& t,
                                 const SimOptions& o) {
  double hbm_bytes_per_ns = (o.hbm_cores > 0 ? t.chip.hbm_bytes_per_s / o.hbm_cores
                                             : hbm_bytes_per_s_per_core(t, p.cores)) /
                            1e9;
  return latency_lower_bound(p, t, inst_timings(p, t, hbm_bytes_per_ns));
}

LatencyBound latency_lower_bound(const lower::Program& p, const target::Target& t,
                                 const std::vector<InstTiming>& timing) {
  // Executions of one pass over each block on one core (0 under a guard); blocks[0] runs once.
  std::vector<double> runs(p.blocks.size(), 0);
  std::vector<bool> done(p.blocks.size(), false);
  LatencyBound out;
  double dma_engine_ns = 0;
  // From the top block down (a block's count is its parent's times its trips).
  std::vector<int> stack{0};
  runs[0] = p.blocks.empty() || p.blocks[0].guard ? 0 : 1;
  while (!stack.empty()) {
    int b = stack.back();
    stack.pop_back();
    if (done[b]) continue;
    done[b] = true;
    for (const lower::Item& item : p.blocks[b].items) {
      if (item.block >= 0) {
        const lower::Block& inner = p.blocks[item.block];
        std::int64_t trips = inner.trips;
        if (b == 0 && p.cores > 1) trips = (trips + p.cores - 1) / p.cores;
        runs[item.block] = inner.guard ? 0 : runs[b] * static_cast<double>(trips);
        stack.push_back(item.block);
        continue;
      }
      const InstTiming& tm = timing[item.inst];
      if (tm.dma)
        dma_engine_ns += runs[b] * tm.transfer_ns * tm.dma_engines;
      else
        out.engine[tm.engine] += runs[b] * tm.busy_ns;
    }
  }
  const int dma = static_cast<int>(sem::Engine::Dma);
  if (dma_engine_ns > 0)
    out.engine[dma] = t.dma.dge_ns + dma_engine_ns / std::max(1, t.dma.engines_per_core);
  out.ns = *std::max_element(out.engine.begin(), out.engine.end());
  return out;
}

}  // namespace ts::sim

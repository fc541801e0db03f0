// Per-instruction timing of a candidate program, computed once per simulation: how long each
// instruction occupies its engine (or the DMA engines), and what it moves. The timeline
// (timeline.h) adds the waits. Internal to ts_sim.
#pragma once

#include <vector>

#include "tilesweep/lower/program.h"
#include "tilesweep/target/target.h"

namespace ts::sim {

struct InstTiming {
  int engine = 0;           // sem::Engine as an index
  double busy_ns = 0;       // compute: engine occupancy of one execution (all repeat copies)
  double ready_ns = 0;      // compute: from the end until the result is readable (access init)
  double instructions = 1;  // hardware instructions per execution (repeat)
  bool dma = false, store = false;
  int dma_engines = 0;     // DMA: engines the tile's partitions map to
  double transfer_ns = 0;  // DMA: time on each of those engines
  double hbm_bytes = 0;    // DMA: bytes read from (load) or written to (store) HBM
  int hbm_buffer = -1;     // DMA: the HBM tensor
};

// `hbm_bytes_per_ns`: the HBM bandwidth one core gets (caps the DMA engines' aggregate).
std::vector<InstTiming> inst_timings(const lower::Program& p, const target::Target& t,
                                     double hbm_bytes_per_ns);

// The cost variables of an instruction, with the defaults instr_cost.cpp uses (MIN_II, P, N,
// bytes, fp32 from the output tile) filled in where the materializer left them out.
lower::CostVars cost_vars(const lower::Program& p, const target::Target& t, const lower::Inst& in);

}  // namespace ts::sim

// The peaks the simulator itself can reach on a target, read off the target description: what
// the attainable bound (roofline.h) divides by. Where the roofline uses published per-core
// constants (AccelOpt's), these come from the same numbers the simulator times programs with,
// so no simulated program can beat the bound they give.
#pragma once

#include "tilesweep/target/target.h"

namespace ts::sim {

struct AttainablePeaks {
  // DMA: the core's engines at their rate and best efficiency, capped by the chip's HBM.
  double dma_bytes_per_s = 0;
  double hbm_bytes_per_s = 0;  // the chip's (shared by the cores of one program)
  // Tensor engine: the fastest contraction instruction (nc_matmul) at its best tile size.
  double matmul_flops_fp32 = 0, matmul_flops_bf16 = 0;
  // Vector + Scalar + GpSimd together: elements per second, each engine at its fastest
  // instruction, times the most data operations one instruction applies per element at its
  // engine's best rate (an activation does func(x * scale + bias): 3; a scan at two cycles per
  // element counts half its closed form's), so that fused instructions stay under it.
  double element_ops_per_s = 0;
  int ops_per_element = 1;
};

// From target.toml ([dma], [engine.*], [chip]) and the isa.toml cost formulas, evaluated at the
// instructions' tile limits. Computed once per target (a cache keyed by the target's address
// and texts); thread-safe.
const AttainablePeaks& attainable_peaks(const target::Target& t);

// The same, not cached (tests of edited targets).
AttainablePeaks compute_attainable_peaks(const target::Target& t);

}  // namespace ts::sim

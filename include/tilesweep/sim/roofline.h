// Two bounds of a kernel at concrete dims, both with AccelOpt's (NKIBench) formula: the largest
// of HBM traffic over a bandwidth, matmul FLOPs over a Tensor engine peak and other FLOPs over a
// vector peak.
//  - roofline (bound_ns): AccelOpt's published per-core constants (target.toml [roofline]), so
//    that "% of roofline" compares with AccelOpt's figures. The simulator may fall short of them
//    (its DMA ceiling is below trn1's 440.2 GB/s) or exceed them (trn2's vector peak).
//  - attainable (attainable_ns): the target description's own peaks (attainable.h): the DMA
//    ceiling the simulator can reach, the Tensor engine's rate from isa.toml per dtype, the
//    Vector + Scalar + GpSimd element rates times the most operations one instruction fuses,
//    over the cores used. No simulated candidate is faster than it.
#pragma once

#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/semantics/dim.h"
#include "tilesweep/target/target.h"

namespace ts::sim {

struct Roofline {
  double traffic_bytes = 0;  // every tensor input and output once
  double matmul_flops = 0;   // 2 x output elements x contracted extent, of contractions
  double other_flops = 0;    // output elements (x reduced extent for reductions), other compute
  double memory_ns = 0, matmul_ns = 0, other_ns = 0;
  double bound_ns = 0;  // the largest of the three
  // The same terms at the target's own peaks, and their largest.
  double attainable_memory_ns = 0, attainable_matmul_ns = 0, attainable_other_ns = 0;
  double attainable_ns = 0;
  // The part of attainable_other_ns the scarce operations force (attainable.h; 0 when none):
  // attainable_other_ns is the larger of it and the fused-operations term.
  double attainable_scarce_ns = 0;

  // Hardware FLOP utilisation of the Tensor engine at this latency: matmul time at peak over it.
  double hfu(double latency_ns) const { return latency_ns > 0 ? matmul_ns / latency_ns : 0; }
  // Achieved traffic over the HBM roofline bandwidth: memory time over the latency.
  double traffic_efficiency(double latency_ns) const {
    return latency_ns > 0 ? memory_ns / latency_ns : 0;
  }
  // The fraction of the roofline reached (AccelOpt's "percent of peak"), 1 at the bound.
  double peak_fraction(double latency_ns) const {
    return latency_ns > 0 ? bound_ns / latency_ns : 0;
  }
  // The fraction of the attainable bound reached; at most 1 for every simulated candidate.
  double attainable_fraction(double latency_ns) const {
    return latency_ns > 0 ? attainable_ns / latency_ns : 0;
  }
  // Every bound divided by `d` (the kernel's work spread evenly over d devices).
  void spread_over(double d);
};

// A contraction (matmul-like: its contracted dims appear in two operands) counts at the
// matmul peak of its operands' dtype (fp32, else bf16); a reduction (one operand) and any other
// compute node at the vector peak; inputs, constants and layout ops (transpose, reshape,
// broadcast_to, concat, repeat, slice, copy) count no FLOPs. Both bounds are for a program on
// `cores` NeuronCores: the peaks times the cores, the traffic over their DMA capped by the HBM
// stacks they touch (cores.h; one core: AccelOpt's constant as published). UserError when a dim
// of `dims` is missing.
// The attainable element term is the larger of two lower bounds: every data operation at the
// most one instruction fuses per element on all element engines at once (counted on `k` as
// written), and the scarce operations (attainable.h: tanh, sin, cos, sqrt, scans) on the engines
// whose instructions compute them, at those instructions' best rates; the second is the least
// over `k` and `variants` (the rewritten kernels whose candidates the search builds), and 0
// where `k` masks or slices.
Roofline roofline(const ir::Kernel& k, const sem::DimEnv& dims, const target::Target& t,
                  int cores = 1, const std::vector<const ir::Kernel*>& variants = {});

}  // namespace ts::sim

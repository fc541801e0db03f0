// The roofline bound of a kernel at concrete dims, with AccelOpt's (NKIBench) formula: the
// largest of HBM traffic over HBM bandwidth, matmul FLOPs over the Tensor engine's peak and
// other FLOPs over the Vector+Scalar peak, all per NeuronCore from the target's [roofline].
// No simulated candidate of one core may beat it.
#pragma once

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
};

// A contraction (matmul-like: its contracted dims appear in two operands) counts at the
// matmul peak of its operands' dtype (fp32, else bf16); a reduction (one operand) and any other
// compute node at the vector peak; inputs, constants and layout ops (transpose, reshape,
// broadcast_to, concat, repeat, slice, copy) count no FLOPs. UserError when a dim of `dims` is
// missing.
Roofline roofline(const ir::Kernel& k, const sem::DimEnv& dims, const Target& t);

}  // namespace ts::sim

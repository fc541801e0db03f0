// The peaks the simulator itself can reach on a target, read off the target description: what
// the attainable bound (roofline.h) divides by. Where the roofline uses published per-core
// constants (AccelOpt's), these come from the same numbers the simulator times programs with,
// so no simulated program can beat the bound they give.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tilesweep/semantics/op_spec.h"
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
  // Scarce operations (scarce_operations below): per operation, the engines whose instructions
  // compute it and the most results of it per second each of them gives (the instruction's
  // elements per second at its best tile, times how often its expression applies the operation).
  std::map<std::string, std::map<sem::Engine, double>> scarce_per_s;
};

// The scarce operations an element expression applies, with how many times: calls of the
// primitive functions that no law of the verifier rewrites into other operations (tanh, sin, cos
// uninterpreted; sqrt only known non-negative; verify/theory.cpp), under the key of the function,
// and products along a range (the closed form of a scan), under "range product", counted once
// however many the expression writes (scan_from writes the start's and each term's). exp and log
// are not among them: the laws of exponents (exp(a + b) = exp(a) exp(b), log(c exp(a)) = log c
// + a) let a program merge or cancel them. `applied(attr)` gives the ops an `apply(attr, ..)`
// may name (an instruction's choices, a node's one value); an apply counts the most any of them
// applies.
using ScarceOps = std::map<std::string, int>;
ScarceOps scarce_operations(
    const sem::Expr& e,
    const std::function<std::vector<const sem::OpSpec*>(const std::string&)>& applied);

// From target.toml ([dma], [engine.*], [chip]) and the isa.toml cost formulas, evaluated at the
// instructions' tile limits. Computed once per target (a cache keyed by the target's address
// and texts); thread-safe.
const AttainablePeaks& attainable_peaks(const target::Target& t);

// The same, not cached (tests of edited targets).
AttainablePeaks compute_attainable_peaks(const target::Target& t);

}  // namespace ts::sim

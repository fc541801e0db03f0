// A lower bound on the simulated latency of a candidate program, without its timeline: what
// simulate() provably cannot beat. Each compute engine runs its instructions one at a time, so
// the latency is at least the sum of its busy times; the core's DMA engines carry every transfer
// on `dma_engines` of them for `transfer_ns` each, none before dge_ns, so the latency is at least
// dge_ns + their engine-time / engines. Executions count one core's share (top-level loops split
// over Program::cores as simulate() splits them); a guarded block and what it holds count zero
// (its iterations may be skipped). The sweep prunes candidates whose bound already loses
// (sweep/prune.h). Cost: linear in the instructions and the loop depth.
#pragma once

#include "tilesweep/lower/program.h"
#include "tilesweep/sim/simulate.h"
#include "tilesweep/target/target.h"

namespace ts::sim {

struct LatencyBound {
  double ns = 0;                   // the bound: the largest of the per-engine bounds
  std::array<double, 5> engine{};  // per sem::Engine (Tensor, Vector, Scalar, GpSimd, Dma)
};

// Same options as simulate() (hbm_cores); `p` must pass lower::validate.
LatencyBound latency_lower_bound(const lower::Program& p, const target::Target& t,
                                 const SimOptions& o = {});

}  // namespace ts::sim

// The timing simulator: one NeuronCore running a candidate program (lower::Program) on the
// simulated Trainium of a Target. Engines Tensor, Vector, Scalar and GpSimd are in-order; the
// core's DMA engines move tiles spread over the engines their partitions map to; buffers carry
// versions (multi-buffering) so engines overlap exactly as far as data allows. Loops that reach
// a periodic steady state are extrapolated instead of simulated to the end.
//
// The model, instruction by instruction (every number from the Target):
//  - compute: cost formula (isa.toml) x repeat in the engine's clock; Vector/Scalar/GpSimd at
//    least MIN_II; Vector + vector_fixed_cycles (K1's per-instruction DVE overhead); GpSimd +
//    gpsimd_start_cycles for instructions shared with other engines (the GpSimd-only formulas
//    include GPSIMD_START already); + psum_read_cycles per PSUM operand read off the Tensor engine.
//    The result is readable sbuf.access_init_cycles after the instruction ends (a latency that
//    back-to-back independent instructions hide, dependent ones pay).
//  - DMA: bytes over the DMA engines the tile's partitions map to (partitions / engines each),
//    at bytes_per_ns_per_engine x efficiency_at(contiguous bytes per partition), x the transpose
//    fraction for a transposing access or dma_transpose; HBM bandwidth per core capped at its
//    share of the HBM stacks the program's cores touch (cores.h). A DMA starts dge_ns after kernel
//    start at the earliest, and start_ns after any dependency it waits on (semaphore-to-start); its
//    engines take transfers in the earliest gap (non-preemptive), so a prefetch may pass a store
//    that waits.
//  - dependencies: RAW on the version read, WAR against reads of version v - bufs, WAW; a
//    dependency between different engines costs semaphore_ns (start_ns into a DMA). Compute
//    instructions writing disjoint column windows of a tile write one version (the tile filled in
//    pieces); a window overlapping the version's pieces starts the next one. (A DMA load into a
//    window is still a version of its own: WAR is tracked per version, not per column.)
//  - several cores (Program::cores): each runs its share of every top-level loop (ceil(trips /
//    cores) iterations, the slowest core's share is simulated); a top-level loop followed by more
//    work ends in a barrier between the cores (core_barrier_ns, cores.h).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tilesweep/lower/program.h"
#include "tilesweep/target/target.h"

namespace ts::sim {

struct SimOptions {
  bool extrapolate =
      true;            // skip the rest of a loop once it is periodic (exact for a periodic regime)
  int hbm_cores = 0;   // cores sharing the chip's HBM bandwidth evenly; 0: the program's cores on
                       // the stacks they touch (cores.h)
  bool trace = false;  // record every simulated instruction (extrapolated ones are not listed)
  // Instruction executions simulated before giving up: bounds a candidate's cost (0.1-0.4 us
  // each, so under half a second) when its loops reach no steady state, as with a prime dim
  // that only 1-element tiles divide. Over it, the result is infeasible with the reason. It
  // counts work, never time, so the answer does not depend on the machine's load. Candidates of
  // the bundled jobs simulate at most ~3e4 (matmul at 65536^3: ~1.1e5).
  std::int64_t max_simulated = 1000000;
  // Stop as soon as the latency is known to exceed this: the timeline-free bound
  // (lower_bound.h) does, or during the run an instruction has ended later or an in-order
  // engine's free time plus its work not yet run does. The result is then infeasible with
  // `stopped` set and latency_ns that lower bound of the latency. The sweep's pruning
  // (sweep/prune.h) passes the latency that already loses; infinity: run to the end.
  double stop_after_ns = std::numeric_limits<double>::infinity();
};

struct TraceEvent {
  int inst = -1;
  sem::Engine engine = sem::Engine::Vector;
  double start_ns = 0, end_ns = 0;
};

struct SimResult {
  bool feasible = true;
  bool stopped = false;   // SimOptions::stop_after_ns passed: latency_ns is a lower bound only
  std::string reason;     // why infeasible (capacity), empty otherwise
  double latency_ns = 0;  // end of the last instruction of one core's share
  // Busy time per engine, indexed by sem::Engine (Tensor, Vector, Scalar, GpSimd, Dma). DMA:
  // engine-time over the core's DMA engines (equals elapsed time when all are busy).
  std::array<double, 5> busy_ns{};
  double hbm_read_bytes = 0, hbm_write_bytes = 0;  // one core's share
  double spill_bytes = 0;            // of those, to and from spill tensors (lower::Buffer::spill)
  std::int64_t sbuf_peak_bytes = 0;  // per partition: sum over SBUF buffers of bytes x bufs
  std::int64_t psum_peak_bytes = 0;  // per partition, likewise
  double instructions = 0;           // hardware instructions issued (repeat copies counted)
  std::int64_t simulated = 0;        // instruction executions simulated (the rest extrapolated)
  std::vector<TraceEvent> trace;     // SimOptions::trace only

  double busy(sem::Engine e) const { return busy_ns[static_cast<int>(e)]; }
};

// Simulates one core's share of `p` (Program::cores > 1 splits the iterations of the top
// block's loops, the slowest core's share is simulated). Infeasible programs (capacity, see
// capacity.h) are not simulated. InternalError for a program that fails lower::validate.
// Thread-safe: no shared state; cost roughly linear in the simulated instructions, which are at
// most o.max_simulated.
SimResult simulate(const lower::Program& p, const target::Target& t, const SimOptions& o = {});

}  // namespace ts::sim

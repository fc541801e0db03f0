// Materialization: one kernel variant, with an instruction choice per op, a fusion choice, a
// tile configuration per fused group and an engine choice per op, at concrete dims, becomes the
// concrete Program the simulator scores. Layout ops become DMA access patterns (a transpose,
// a strided slice, a broadcast) or aliases (a contiguous reshape) of HBM tensors.
//
// Loop nest of one fused group (Axon §4.3): batch loops, then the strip loop over row blocks
// of `pt * block` rows; inside it the group's ops in order. Element-wise ops and reductions
// along the free dim work on whole rows ([pt, C] tiles; a purely element-wise group may tile
// the free dim too, `free` columns at a time); a matmul loops over N tiles of `free` columns and
// K tiles of 128, reusing each loaded right-hand-side tile for the `block` row tiles of the
// strip and accumulating in PSUM. Values used outside the group go to HBM.
//
// A swap site's values (ProgramPlan::transposed) are computed on transposed tiles: the strip's x^T
// is built once per K tile (the producers' `pre`), each producer writes [128 of N, strip rows]
// chunks with the fused root instruction, the chain works chunk by chunk, and the consumer
// reads the chunks as its K tiles, no transpose left.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/lower/lowered.h"
#include "tilesweep/lower/program.h"
#include "tilesweep/target/target.h"

namespace ts::lower {

struct GroupTiling {
  std::int64_t pt = 128;   // rows per tile (partitions)
  std::int64_t block = 1;  // row tiles per strip
  std::int64_t free =
      0;         // matmul N tile, or the free tile of an element-wise group (0: whole rows)
  int bufs = 2;  // multi-buffering depth of the strip's buffers
  // Spill: a matmul's result that later ops of the nest read goes to HBM and is loaded back,
  // instead of staying on chip for the whole strip ([pt, block x N] of SBUF). Offered only where
  // the nest does not fit without it.
  bool spill = false;
  // Loop-invariant hoisting: each matmul of the nest whose pick splits at its root
  // (OpPick::hoist_pre) computes pre(x) — x^T — for the whole strip once, before its N loop,
  // and keeps it resident ([K tile, K / K tile x strip rows]); the N loop reads it. Without it,
  // pre(x) is recomputed per N tile. Offered where a matmul has more than one N tile.
  bool hoist = false;
  // W-stationary loop order: each matmul of the nest whose right-hand side is an HBM tensor
  // (not computed in the nest) loads it whole once, before the strip loop (inside the batch
  // loops), and keeps it resident ([K tile, K / K tile x N]); the strips stream x past it.
  // Without it, the right-hand side is reloaded per strip. Offered where the nest has more than
  // one strip.
  bool resident = false;
  // Wide stores: a matmul result that only goes to HBM is evacuated N tile by N tile into one
  // SBUF tile of `store` columns ([pt, block x store]) and stored once per `store` columns,
  // longer DMA runs than one N tile's (the PSUM bank bounds the N tile, not the store). 0: one
  // store per N tile. Offered where a nest stores a matmul result (dominance-pruned to the
  // widest that fits as deep).
  std::int64_t store = 0;
  // Panel loads (panel_rhs.cpp): each matmul of the nest whose right-hand side y [K, N] is an
  // HBM tensor (not resident) loads y's [K, W] column panels — one DMA of [K tile, W] per K tile
  // — before the K loop that reads their windows. A matmul of a swap site computed transposed
  // (layout_swap.h) loads panels of W = rhs_panel_columns(N), several of its 128-column chunks:
  // runs of W elements per partition instead of 128 (512 B of f32: a third of the DMA rate);
  // one in a matmul nest loads one panel per N tile (W = the N tile): all its K tiles' loads in
  // flight at once. Offered where a panel holds more than one chunk (computed transposed) or more
  // than one K tile (a matmul nest), dominance-pruned like `store`.
  bool panel = false;
  // Online key tile (online_nest.cpp, online_split.h): a group whose matmul contracts a row
  // streamed `online` columns at a time, its operand an element-wise chain of the streamed value
  // and a running statistic, every partial result rescaled as the statistic moves (FlashAttention).
  // 0: the row whole.
  std::int64_t online = 0;
  // In-place writes (in_place.cpp): an element-wise op of the nest writes its result over an
  // operand tile that no later op reads (a value of the nest, or an HBM operand loaded for the
  // row tile), where the tiles have the same memory, dtype and shape, instead of into a buffer
  // of its own: one buffer fewer live at once. Whether an instruction reads an operand
  // element-wise comes from its semantics (sem::InstrSpec::elementwise_operand). Offered where
  // a nest has such an op and the twin fits deeper than the tiling without it (the in-place
  // write waits for every other reader of the operand, so it may overlap less).
  bool in_place = false;
  // Software pipelining (software_pipeline.h): the nest's loop around its first evacuation out
  // of PSUM runs the next iteration's matmul stage before this iteration's element-wise stages
  // (`A(0); for i < n - 1: { A(i + 1); B(i) }; B(n - 1)`), so the engines of the two overlap.
  // Offered where such a loop exists, can be pipelined and the twin fits.
  bool pipeline = false;
  // On-chip strides (strided_operands.h): an HBM operand that is a slice with a step along the
  // free axis is loaded contiguously (the columns its elements span) and read through a window
  // with that step, instead of by a strided DMA (runs of one element). Offered where a nest reads
  // such a slice.
  bool onchip_steps = false;
  // Partition broadcasts on the PE (pe_broadcast.cpp): an HBM operand that is one row broadcast
  // across the tile's partitions is loaded as that row and broadcast into PSUM by a matmul with a
  // ones stationary, instead of by a DMA writing the row into every partition; its readers read
  // PSUM (a Vector tensor_tensor with its other input in SBUF at one element per cycle, S0).
  // Offered where a nest reads such an operand and the twin fits.
  bool pe_broadcast = false;
  // Partials in PSUM (carried_reduction.cpp): an fp32 element-wise value of the nest that only
  // batch reductions of the nest read (each trip's slice they fold into their running values) is
  // written to PSUM, so that the fold, a Vector tensor_tensor with its running value in SBUF,
  // runs at one element per cycle instead of two (S0). Offered where a nest has such a value and
  // the twin fits.
  bool psum_partials = false;
  // Values in PSUM (psum_values.cpp): after the nest is emitted, where a Vector instruction's
  // cost formula is lower with one input in PSUM (tensor_tensor, S0) and both are in SBUF, one of
  // them (an fp32 value of the nest that only compute instructions allowing PSUM touch, at most a
  // quarter of PSUM per copy) is moved to PSUM. Offered where that moves a value and the twin fits.
  bool psum_values = false;
  // Loads in PSUM (psum_values.cpp, with psum_values): where such an instruction's inputs are
  // both loaded tiles (no DMA writes PSUM), one of them is copied into PSUM by the Scalar engine
  // right after its load, and its Vector readers read the copy (rope's products of x with cos and
  // sin). Offered where that copies a tile and the twin fits.
  bool psum_loads = false;

  bool operator==(const GroupTiling&) const = default;
};

// The panel width of a swap site's right-hand sides with N columns (GroupTiling::panel): the
// widest power-of-two multiple of its 128-column chunk, up to 512 columns, dividing N (the chunk
// itself when none is wider).
std::int64_t rhs_panel_columns(std::int64_t n);

struct OpPick {
  const ir::Kernel* lowering = nullptr;  // instruction program over the op's tile form
  int engine = 0;                        // index into each instruction's engines (clamped)
  int copy_engine = -1;                  // the same for the copies around it; -1: `engine`
  // A matmul computed transposed (layout_swap.h): its lowering's part over x alone, run once per
  // strip and K tile; `lowering` is then the fused root instruction over (pre(x), y).
  const ir::Kernel* pre = nullptr;
  // A matmul whose left operand is a transposed view (OpChoices::stationary): the view's source
  // loaded as it lies, [K tile, rows], once per strip, as `lowering`'s stationary operand.
  bool stationary = false;
  // The lowering split at its root instruction (split_at_root): the part over x alone and the
  // root over (pre(x), y), for a nest that hoists pre out of the N loop (GroupTiling::hoist).
  // Null when the lowering does not split.
  const ir::Kernel* hoist_pre = nullptr;
  const ir::Kernel* hoist_root = nullptr;
  // A free-axis reduction whose `lowering` computes it with its producer (instruction fusion):
  // the reduction's own lowering, which a streamed nest folds its running statistic with
  // (split_reduction.h). Null otherwise (`lowering` is its own).
  const ir::Kernel* combine = nullptr;
  // A scan along the free axis (chunked_scan.h): the lowering of its chunk step, which starts
  // from the state the previous chunk ended in; a nest that tiles the scan's row into chunks
  // runs it per chunk. Null otherwise.
  const ir::Kernel* chunk = nullptr;

  int copies() const { return copy_engine < 0 ? engine : copy_engine; }
};

// What every program of a kernel at given dims and fusion groups starts with: the HBM tensors,
// their views (layout ops), folded constants and concrete shapes. make_prefix builds it once
// (per candidate-space section) so that materializing a candidate does not redo it, with the
// section's lowering programs (OpPick::lowering, pre) prepared for emission.
struct Prefix;
// NoProgram for a layout op or an output no DMA access pattern expresses.
Lowered<std::shared_ptr<const Prefix>> make_prefix(const ir::Kernel& k, const sem::DimEnv& dims,
                                                   const target::Target& t,
                                                   const std::vector<std::vector<int>>& groups,
                                                   std::vector<const ir::Kernel*> lowerings = {});

struct OnlineSplit;

struct ProgramPlan {
  std::vector<std::vector<int>> groups;  // fusion_groups()
  std::vector<GroupTiling> tiling;       // per group
  std::map<int, OpPick> picks;           // per compute node
  std::map<int, int> absorbed;  // element-wise producer -> the reduction whose pick lowers both
  // An element-wise region's root (region.h) -> its pick's parameters, each an operand (reader
  // node, input index) of the region; its other ops are `absorbed` into it.
  std::map<int, std::vector<std::pair<int, int>>> fused_operands;
  std::vector<int> transposed;  // nodes computed on transposed tiles (SwapSite::transposed), sorted
  int cores = 1;
  // The kernel's online splits (online_split.h), which an online tiling's nest folds with.
  const std::vector<OnlineSplit>* online = nullptr;
  const Prefix* prefix = nullptr;  // make_prefix(k, dims, t, groups), or null to compute it here
  bool notes = true;               // Inst::note filled in (for people: printing, NKI comments)
  // A dead value's buffer reused by a later value of its nest (buffer_reuse.cpp); off only to
  // compare against.
  bool reuse_buffers = true;
  // The target's rules rebind() keeps the engines to (materialize() takes them from its target).
  const target::Legality* legality = nullptr;
  // An element-wise instruction and the reduction of its result issued as one instruction where
  // the target has one (reduction_fusion.h); off only to compare against. rebind() redoes it
  // for the new engines with `target` (materialize() uses its own), and drops it without one.
  bool fuse_reductions = true;
  const target::Target* target = nullptr;
};

// NoProgram (with the reason) when a layout op or an op form has no program yet; throws
// UserError when the dims do not satisfy the kernel. The program passes validate().
Lowered<Program> materialize(const ir::Kernel& k, const sem::DimEnv& dims, const target::Target& t,
                             const ProgramPlan& plan);

// The engines and multi-buffering depths of `p` (materialized from a plan that differs from
// `plan` at most in the picks' engines and the tilings' `bufs`) re-evaluated for `plan`: the
// program materialize(k, dims, t, plan) builds, without building it.
void rebind(Program& p, const ProgramPlan& plan);

// The concrete row count of a group (the strip loop's extent) and its free extent, for tiling.
struct GroupExtent {
  std::int64_t rows = 1, cols = 1;
  bool has_matmul = false, elementwise = true;
  std::vector<std::int64_t> matmul_n;  // N of each matmul in the group
  // The longest row a free-axis reduction of the group reduces (0: none): what a streamed
  // tiling splits (split_reduction.h).
  std::int64_t reduced_cols = 0;
  // No matmul, every op element-wise, a reduction along a batch dim or a scan along the free
  // axis that has a chunk op, at least one such scan, all over rows of `cols`: a group whose
  // rows a chunked-scan tiling may cut into free tiles (chunked_scan.h).
  bool chunkable = false;
};
GroupExtent group_extent(const ir::Kernel& k, const std::vector<int>& group,
                         const sem::DimEnv& dims);

}  // namespace ts::lower

// A candidate program: a concrete loop nest of ISA instructions over buffers placed in HBM,
// SBUF or PSUM, with a multi-buffering depth per on-chip buffer. It is the single thing the
// timing simulator scores, the functional interpreter runs on numbers, and the NKI emitter
// prints, so the three always agree on what runs.
//
// Shape of a program: `blocks[0]` is the top level (one trip); every block holds an ordered list
// of items, each an instruction or a nested block (a loop). Loop variables are block ids.
// Tiles are moved between HBM and on-chip buffers by DMA instructions whose HBM side is an
// affine `Access`; every other instruction reads and writes whole on-chip tiles.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tilesweep/base/small_vector.h"
#include "tilesweep/ir/dtype.h"
#include "tilesweep/semantics/attr.h"
#include "tilesweep/semantics/instr_spec.h"
#include "tilesweep/target/cost_vars.h"

namespace ts::lower {

using target::CostVars;  // the cost variables belong to the target description

// Loop terms of an affine start: sum over (block b, step s) of iter(b) * s.
using Terms = SmallVector<std::pair<int, std::int64_t>, 3>;

struct Buffer {
  std::string name;
  sem::Memory memory = sem::Memory::Sbuf;
  ir::DType dtype = ir::DType::F32;
  // HBM: the whole tensor. SBUF/PSUM: one tile, [partitions, free] (partitions first).
  std::vector<std::int64_t> shape;
  int bufs = 1;  // on-chip: copies rotated across writes (multi-buffering)
  // On-chip: > 0 when `bufs` is the candidate's multi-buffering depth of its nest, capped at
  // this; 0 when fixed (constants, a strip-long value). What lower::rebind re-evaluates.
  int bufs_cap = 0;
  // On-chip: the fewest copies the program needs whatever the candidate's depth (a software-
  // pipelined loop's stage reads the copy an earlier iteration wrote: Inst::in_lag + 1).
  int min_bufs = 1;
  // PSUM: a tile the PE writes (a matmul's accumulator, a transpose's result), given the banks
  // its nest leaves free at the candidate's deepest multi-buffering (materialize/psum_depth.cpp).
  bool fills_psum = false;
  int param = -1;   // HBM: the kernel parameter it holds
  int output = -1;  // HBM: the kernel output it holds
  int alias =
      -1;  // HBM: shares the storage of this buffer, read row-major in its own shape (reshape)
  bool constant = false;  // on-chip: written once before any loop (an immediate tile)
  bool spill = false;     // HBM: scratch that a spilled on-chip value goes through
  // On-chip: the top-level loop nest (fused group) whose buffers it belongs to; nests run one
  // after another, so their buffers share the memory. -1: live for the whole program.
  int nest = -1;

  std::int64_t elements() const;
  std::int64_t bytes_per_partition() const;  // on-chip: free elements x dtype bytes
  std::int64_t bytes() const;                // all of it, one copy
};

// The HBM side of a DMA. Buffer dim d feeds tile dim `tile_dim[d]` of the on-chip tile: it starts
// at start(d) = offset[d] + sum over (block b, step s) in `terms[d]` of iter(b) * s and spans
// `extent[d]` elements `stride[d]` apart (a strided slice). `tile_dim[d]` = -1 for a dim of extent
// 1 that the tile does not carry. A tile dim that no buffer dim feeds is a broadcast (the DMA
// repeats the data). Two buffer dims feeding one tile dim merge (outer first), as a contiguous
// reshape does. Empty `offset` / `stride` mean 0 / 1. `iter` is indexed by block id.
// A repeated dim (np.repeat, `repeat[d]` = r > 1): start(d) counts repeated elements, and tile
// position j reads buffer element base[d] + stride[d] * floor((start(d) + j) / r) — a stride-0
// access dim inside the tile dim (each element read r times; a tile may start inside a group).
struct Access {
  int buffer = -1;
  SmallVector<std::int64_t, 4> extent;          // per buffer dim
  SmallVector<Terms, 4> terms;                  // per buffer dim
  SmallVector<int, 4> tile_dim;                 // per buffer dim
  SmallVector<std::int64_t, 4> offset, stride;  // per buffer dim
  SmallVector<std::int64_t, 4> repeat, base;    // per buffer dim; empty: 1 / 0 (no repeat)

  std::int64_t start(std::size_t dim, const std::vector<std::int64_t>& iter) const;
  std::int64_t step(std::size_t dim) const { return stride.empty() ? 1 : stride[dim]; }
  std::int64_t repeats(std::size_t dim) const { return repeat.empty() ? 1 : repeat[dim]; }
  bool repeats_any() const;
  // The buffer element that tile position `j` along dim `dim` reads.
  std::int64_t index(std::size_t dim, const std::vector<std::int64_t>& iter, std::int64_t j) const;
  std::int64_t contiguous_bytes(const std::vector<std::int64_t>& hbm_shape, int dtype_bytes) const;
};

// A window of an on-chip buffer along its free (last) dim: `width` columns `step` apart from start
// = offset + sum over (block b, step s) of iter(b) * s (columns start + c * step, c < width). width
// 0 = the whole buffer. Instructions read and write windows of wider buffers (a row block's tile,
// one K slice of a row of x; an imported NKI kernel's tile of a larger on-chip array, whose
// constant index is the offset); a step > 1 is a strided operand access (every other column of a
// contiguously loaded tile: a strided slice read on chip instead of by a strided DMA). A read
// window with `repeat` r > 1 reads each column r times (column c of the window is start +
// (c / r) * step: a stride-0 access dim, np.repeat along the free axis read on chip).
struct Window {
  Terms terms;
  std::int64_t width = 0;
  std::int64_t offset = 0;
  std::int64_t step = 1;    // columns between consecutive elements (>= 1)
  std::int64_t repeat = 1;  // consecutive window columns reading the same column (>= 1)

  bool whole() const { return width == 0; }
  std::int64_t start(const std::vector<std::int64_t>& iter) const;
  // The buffer column window column `c` reads or writes.
  std::int64_t column(std::int64_t start, std::int64_t c) const {
    return start + c / repeat * step;
  }
  // One past the last column the window touches.
  std::int64_t end(const std::vector<std::int64_t>& iter) const {
    return column(start(iter), width - 1) + 1;
  }
};

struct Inst {
  const sem::InstrSpec* spec = nullptr;      // the ISA instruction (dma_copy, nc_matmul, ...)
  sem::Engine engine = sem::Engine::Vector;  // one of spec->engines
  // The op whose pick chose `engine` (its instructions' choice, or with `engine_copies` its
  // copies'); -1: the instruction's first engine. What lower::rebind re-evaluates.
  int engine_node = -1;
  bool engine_copies = false;
  SmallVector<int, 3> in;            // on-chip operand buffers, in the instruction's operand order
  int out = -1;                      // the on-chip buffer written
  SmallVector<Window, 3> in_window;  // per `in` operand (empty = whole buffers)
  // Per `in` operand (empty = all 0): the copy read, as versions before the buffer's latest. A
  // software-pipelined loop (software_pipeline.h) runs the next iteration's first stage before
  // this one's later stages, which then read the copy written one version earlier (lag 1).
  SmallVector<int, 3> in_lag;
  int lag(std::size_t operand) const { return operand < in_lag.size() ? in_lag[operand] : 0; }
  Window out_window;
  sem::AttrMap attrs;  // the instruction's attributes (func, op0, scale, ...)
  // An instruction over its tile's positions (affine_select on a mask's tile): the integer
  // attribute `moving_attr` is attrs' value plus these loop terms (sum of iter(b) * s) at each
  // iteration, as an Access's start; empty `moving_attr`: no attribute moves.
  std::string moving_attr;
  Terms moving;
  // DMA only: the HBM side; `store` = SBUF -> HBM (then `in` holds the SBUF tile, `out` = -1).
  // The on-chip side is the window (in_window[0] for a store, out_window for a load).
  bool dma = false, store = false;
  Access hbm;
  // PSUM accumulation across the iterations of this block: iteration 0 writes, later ones add.
  int accumulate_block = -1;
  // Part of a streamed reduction's fold (split_reduction.h): running <- op([running, partial]),
  // the reduction's own lowering over the running value and the tile's partial beside it, proved
  // to combine the reductions of two consecutive column ranges; what a cross-core reduction
  // (core_reduction.h) runs once more per core's partial.
  bool fold = false;
  // The formula variables of the instruction at this tile size (pattern dims, P, N, fp32,
  // bytes), computed at materialization; `repeat` copies are issued when a tile exceeds the
  // instruction's limits (each copy at the limit size, the variables are per copy).
  CostVars vars;
  int repeat = 1;
  // A copy out of PSUM whose form the copies' engine choice picks (psum_copy.h): the zero bias
  // tile of its Scalar form; -1: no such choice.
  int scalar_bias = -1;
  std::string note;  // what the instruction computes, e.g. "rms = rsqrt(..)"
  // Where the instruction is the whole lowering of a kernel reduction along the free axis of its
  // operand 0 (synthesis proved it equal to the op): the op's reducer; none where unknown.
  std::optional<sem::Reducer> reduces;
  // Issued fused with instruction `rides` (reduction_fusion.h): this reduction reads exactly the
  // element-wise result `rides` writes, and the target's instruction `fused` writes both in one
  // pass. The program keeps both (the interpreter and every dependency analysis run them as
  // they are); the timeline runs this one on `rides`'s engine right after it, charging `fused`'s
  // cost less that of `rides`, and the NKI emitter prints `rides` as `fused` and nothing here.
  int rides = -1;
  const sem::InstrSpec* fused = nullptr;
};

struct Item {
  int inst = -1;  // exactly one of inst / block is set
  int block = -1;
};

// Which iterations of a loop run: those where offset + sum over (block b, step s) in `terms` of
// iter(b) * s >= 0 (b this block or an enclosing one). A triangular nest: the column tiles of a
// causal mask's row tile that the mask covers entirely are skipped (verify/tile_skip.h proves
// that such a tile contributes its reductions' identity); nothing inside the loop runs in a
// skipped iteration.
struct Guard {
  Terms terms;
  std::int64_t offset = 0;

  bool holds(const std::vector<std::int64_t>& iter) const;
};

struct Block {
  std::string var;  // loop variable ("" for the top level)
  std::int64_t trips = 1;
  int parent = -1;
  std::vector<Item> items;
  std::optional<Guard> guard;  // none: every iteration runs
};

struct Program {
  std::string kernel;
  std::vector<Buffer> buffers;
  std::vector<Inst> insts;
  std::vector<Block> blocks;  // blocks[0] is the top level
  int cores = 1;              // NeuronCores the outermost block's iterations are split across
  std::string config;         // the candidate's configuration in words (archives record it)
  // The two forms of a copy out of PSUM (psum_copy.h), where an instruction has a choice
  // (Inst::scalar_bias): tensor_copy, and activation(func='copy') on the Scalar engine.
  const sem::InstrSpec* psum_copy_vector = nullptr;
  const sem::InstrSpec* psum_copy_scalar = nullptr;

  // Iteration counts: how many times each instruction runs in all (trips of its enclosing loops,
  // less the iterations their guards skip).
  std::vector<std::int64_t> executions() const;
  // Bytes the DMAs move to and from spill tensors (Buffer::spill), all iterations.
  double spill_bytes() const;
};

// On-chip use per partition as the allocator sees it: buffers of the whole program plus the
// largest loop nest's (x their multi-buffering); PSUM in whole banks of `bank_bytes`.
struct OnChipUse {
  std::int64_t sbuf_bytes = 0, psum_bytes = 0;
  int psum_banks = 0;
};
OnChipUse on_chip_use(const Program& p, std::int64_t bank_bytes);
// The same with the buffers of nest `nest` and of the nests from `groups` on (the copies after
// the fused groups' nests, output_copy.cpp) counted, the other groups' nests left out: what one
// group's nest needs beside what the program holds whatever those nests' tilings. The program
// fits iff this fits for every nest below `groups` (nests run one after another).
OnChipUse nest_use(const Program& p, std::int64_t bank_bytes, int nest, int groups);

// Checks the structural invariants (ids in range, DMA accesses inside their tensors, on-chip
// operands on memories the instruction allows); InternalError naming the broken one.
void validate(const Program& p);

}  // namespace ts::lower

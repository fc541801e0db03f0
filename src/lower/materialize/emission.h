// The pieces the materialization passes share (materialize.cpp runs them in order):
//
//   hbm_views.cpp        kernel + dims + groups -> Prefix: concrete shapes, frames, folded
//                        constants (constant_fold.cpp), HBM tensors and the views layout ops make
//   prepared_lowering.cpp  a lowering program -> what op emission needs of each of its nodes
//   group_nest.cpp       per fused group: the loop nest (batch, strip, free-tile loops) and the
//                        row-wise ops in it
//   matmul_nest.cpp      a matmul's N and K loops, PSUM accumulation and evacuation
//   transposed_nest.cpp  a swap site's values, computed chunk by chunk on transposed tiles
//   hoisted_lhs.cpp      a matmul's x^T computed once per strip, outside the loops reading it
//   resident_rhs.cpp     a matmul's right-hand side loaded once, before the strip loop
//   panel_rhs.cpp        a matmul's right-hand side loaded in [K, W] column panels
//   wide_store.cpp       a matmul result stored several N tiles at a time
//   buffer_reuse.cpp     a dead value's buffer reused by a later value of the nest
//   psum_depth.cpp       the PE's PSUM tiles deepened into the banks left free (bufs >= 3)
//   output_copy.cpp      after the groups: the outputs that are views copied into their tensors
//   in_place.cpp         an element-wise op's result written over a dead operand's tile
//   op_emission.cpp      one op's lowering program as instructions on tiles
//   dma_transpose_fusion.cpp  a DMA instruction on a tile just loaded becomes that load
//   spill.cpp            the HBM scratch tensor of a spilled value
//   strided_operand.cpp  a slice stepping along the free axis loaded contiguously, read strided
//   instructions.cpp, hbm_access.cpp  the building blocks: buffers, loops, loads, stores,
//                        constants, DMA access patterns
//
// then ProgramBuilder::build() validates. Each pass appends to one Emission.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "prefix.h"
#include "tilesweep/ir/interpreter.h"
#include "tilesweep/lower/program_builder.h"
#include "tilesweep/target/instr_cost.h"

namespace ts::lower {

using Shape = target::TileShape;

struct Tile {
  int buffer = -1;
  Window window;
  Shape shape;  // [rows, cols] of the window
};

// Where one value dim sits in a tile access: its start terms (value coordinates), its extent,
// and the tile dim it feeds (-1: none).
struct Place {
  Terms terms;
  std::int64_t extent = 1;
  int tile_dim = -1;
};

// A buffer's multi-buffering depth: the candidate's (`cap` > 0, at most cap), or `bufs` fixed.
struct Depth {
  int bufs = 1;
  int cap = 0;
};
constexpr int kUncapped = 1 << 20;

// The engine choice an instruction takes: its op's pick (the op's own, or its copies') or,
// for node -1, the instruction's first engine.
struct EngineOf {
  int node = -1;
  bool copies = false;
};
int engine_index(const ProgramPlan& plan, EngineOf e);
sem::Engine engine_of(const sem::InstrSpec& spec, int index);

// The loop nest of one fused group as it is emitted.
struct Nest {
  int group = -1;
  GroupTiling tiling;
  std::vector<Terms> batch;    // index of each batch dim of the group, by its loops
  int strip = -1;              // strip loop variable (-1: one trip)
  int body = 0;                // the block inside the strip (and free-tile) loop
  int free_loop = -1;          // free-tile loop variable (element-wise groups)
  std::int64_t free_tile = 0;  // free tile width (element-wise groups; 0: whole rows)
  bool streamed = false;       // reductions split along free tiles (stream_nest.cpp)
  // A nest with a reduction along a batch dim (frame.h, reduces_batch) loops over that dim
  // innermost, inside the strip loop: `carry` is the block around that loop (where the running
  // values start and, after it, are stored) and `carried` the loop's first item in it.
  int carry = -1;
  std::size_t carried = 0;
  // A nest that cuts its rows into chunks (a chunked scan, chunked_scan.h): the block around the
  // chunk loop (where each scan's state starts, per trip of the loops above) and the loop's
  // position in it.
  int chunk_block = -1;
  std::size_t chunk_at = 0;
  // An on-chip value inside the group: a buffer holding `cols` columns per row tile, `block` row
  // tiles side by side.
  struct Value {
    int buffer = -1;
    std::int64_t cols = 1;
  };
  std::map<int, Value> values;  // on-chip results of the group's nodes
  // Values computed transposed, chunk by chunk of 128 of N: the consumer's operand in an
  // [nt, N / nt x S] buffer (chunk j at columns j x S), the others in one chunk's [nt, S].
  struct TransposedValue {
    int buffer = -1;
    bool whole = false;  // every chunk of the strip
  };
  std::map<int, TransposedValue> transposed;
  std::map<int, Tile> scalars;  // scalar operands of transposed ops, loaded for the strip
  std::map<std::pair<int, std::uint64_t>, int>
      transposed_lhs;             // (x, pre's structural hash) -> the strip's x^T
  std::map<int, int> stationary;  // a transposed view's source -> the strip's stationary operand
  std::map<int, int> resident;  // a matmul's right-hand side -> its buffer (GroupTiling::resident)
  // Buffer reuse (value_buffer): each on-chip value's last reader, as a position in the group's
  // order, and the buffers of values already past theirs, free for a later value of the same
  // form. Empty `last_read`: no reuse in this nest.
  std::map<int, std::size_t> last_read;
  std::vector<int> free_buffers;

  std::int64_t strip_rows() const { return tiling.pt * tiling.block; }
  // The strip's buffers rotate through the candidate's multi-buffering depth.
  Depth strip_depth() const { return {tiling.bufs, kUncapped}; }
};

// What the passes append to: the program being built and what they remember between ops.
struct Emission {
  Emission(const ir::Kernel& k, const sem::DimEnv& dims, const target::Target& t,
           const ProgramPlan& plan, const Prefix& prefix, Program start);

  const ir::Kernel& kernel;
  const sem::DimEnv& dims;
  const target::Target& target;
  const ProgramPlan& plan;
  const Prefix& prefix;
  ProgramBuilder builder;
  using ConstKey =
      std::tuple<std::uint64_t, std::int64_t, std::int64_t>;  // (value bits, rows, cols)
  std::vector<std::pair<ConstKey, int>> constant_tiles;       // made so far; a program has a few
  const sem::InstrSpec* common[3] = {};  // dma_copy, tensor_copy, memset, once looked up
  int current_node = -1;
  // Where the tile being emitted starts along its rows and its columns (loop terms), for an op
  // reading a mask (index_source.h); set by the row-wise ops around emit_lowering.
  std::optional<std::pair<Terms, Terms>> origin;
  int nest = -1;          // the loop nest (group) being emitted
  int fusable_load = -1;  // a load only the current lowering reads (dma_transpose fusion)
  std::vector<std::pair<int, int>> load_of;  // (buffer, the DMA load writing it)
  std::deque<std::pair<const ir::Kernel*, PreparedLowering>>
      local_lowerings;             // those the prefix lacks
  std::map<int, HbmView> spilled;  // node -> its spill tensor's view
  // Each op's lowering as emitted (emit_lowering): the instructions [first, last) and the buffer
  // of its result (masked_tiles.cpp reads a value's writers and readers off it).
  struct Emitted {
    int node = -1, buffer = -1;
    std::size_t first = 0, last = 0;
  };
  std::vector<Emitted> emitted;

  const Frame& frame(int node) const { return prefix.frame(node); }
  const std::vector<std::int64_t>& shape(int node) const {
    return prefix.shapes[static_cast<std::size_t>(node)];
  }
  const std::optional<double>& constant(int node) const {
    return prefix.consts[static_cast<std::size_t>(node)];
  }
  bool is_transposed(int node) const;
  std::string describe(int node) const;  // "label = op"
};

// ---- buffer reuse (buffer_reuse.cpp) ----
// The positions in `nest`'s group of each value's last reader (Nest::last_read), or none where
// the nest's values are not all read in program order (a swap site's, a streamed nest's).
void plan_reuse(const Emission& e, Nest& nest);
// A buffer for a value of `nest`: a free one of the same memory, dtype, shape and depth, or new.
int value_buffer(Emission& e, Nest& nest, const std::string& name, sem::Memory m, ir::DType dt,
                 const Shape& shape, Depth depth);
// The position in the group `nodes` of the op that emits `node`: its own, or that of the op
// absorbing it (an instruction-fusion pair's consumer, an element-wise region's root).
std::size_t emitted_at(const Emission& e, const std::vector<int>& nodes, int node);
// After the op at `position` of the group: the buffers of the values it read last become free.
void release_read(Nest& nest, std::size_t position);

// ---- building blocks (instructions.cpp) ----
// A loop of `trips` at the end of `parent`, or `parent` itself for one trip.
int nest_loop(Emission& e, int parent, const std::string& var, std::int64_t trips);
// The loop variable of `block` opened in `parent` (-1: no loop was opened).
inline int loop_var(int block, int parent) { return block == parent ? -1 : block; }
int add_buffer(Emission& e, const std::string& name, sem::Memory m, ir::DType dt,
               const Shape& shape, Depth depth);
enum class Common { DmaCopy, TensorCopy, Memset };
// The building blocks and passes return NoProgram (a Lowered without a value, or a set optional)
// where the plan has no program; the driver stops at the first.
// An instruction made in place (ProgramBuilder::new_inst), not placed yet.
Lowered<Inst*> make_inst(Emission& e, Common which, const SmallVector<Shape, 3>& operands,
                         const Shape& out, ir::DType dt, EngineOf engine);
Lowered<Inst*> make_inst(Emission& e, const sem::InstrSpec* spec,
                         const SmallVector<Shape, 3>& operands, const Shape& out, ir::DType dt,
                         EngineOf engine);
// A load of `value` at `places` into `dest` (a window of a buffer already made).
std::optional<NoProgram> load_into(Emission& e, int block, int value,
                                   const std::vector<Place>& places, const Tile& dest);
Lowered<Tile> load(Emission& e, int block, int value, const std::vector<Place>& places,
                   const Shape& tile, Depth depth);
// The same through `view` (a view of value's HBM tensor other than its own).
Lowered<Tile> load_view(Emission& e, int block, int value, const HbmView& view,
                        const std::vector<Place>& places, const Shape& tile, Depth depth);
// ---- on-chip steps (strided_operand.cpp, GroupTiling::onchip_steps) ----
// Value `value` at `places` as a [rows, cols] `tile` where its view steps along the HBM dim that
// feeds the tile's columns: the contiguous columns its elements span, loaded (once per region:
// `loads` maps each region loaded to its buffer) and read through a window with the view's step.
// nullopt when the view takes no step there, or the region would leave its tensor.
using StridedLoads = std::map<std::vector<std::int64_t>, int>;
std::optional<Lowered<Tile>> load_steps_on_chip(Emission& e, int block, int value,
                                                const std::vector<Place>& places, const Shape& tile,
                                                Depth depth, StridedLoads& loads);
// ---- values in PSUM (psum_values.cpp, GroupTiling::psum_values) ----
// Buffers of nests with psum_values moved to PSUM where a Vector instruction then reads one
// input from each memory (the faster case of its cost formula).
void place_psum_values(Program& p, const target::Target& t, const ProgramPlan& plan);
// ---- PSUM depth (psum_depth.cpp) ----
// In each nest whose candidate multi-buffers at depth 3 or more, the PE's PSUM tiles
// (Buffer::fills_psum: matmul accumulators, transposes) take, one copy at a time in turn, the
// banks the nest leaves free (nest_use), up to one copy per bank: the PE then runs that many
// tiles ahead of the engine evacuating them, which has the rest of the chain (the exp of a
// softmax row) to run in between.
void fill_psum_banks(Program& p, const target::Target& t, const ProgramPlan& plan);
// ---- partition broadcasts on the PE (pe_broadcast.cpp, GroupTiling::pe_broadcast) ----
// True when a [rows, cols] `tile` of a value at `places` reads one row broadcast across its
// partitions (no value dim feeds the tile's rows).
bool broadcast_across_partitions(const std::vector<Place>& places, const Shape& tile);
// That row loaded ([1, cols]) and broadcast into a PSUM tile [rows, cols] by nc_matmul with a
// ones stationary.
Lowered<Tile> load_broadcast_on_pe(Emission& e, int block, int value,
                                   const std::vector<Place>& places, const Shape& tile,
                                   Depth depth);
std::optional<NoProgram> store(Emission& e, int block, const Tile& from, int value,
                               const std::vector<Place>& places);
Lowered<int> constant_tile(Emission& e, double value, const Shape& shape, ir::DType dt);
Lowered<Tile> ensure_memory(Emission& e, int block, const Tile& t,
                            const std::vector<sem::Memory>* allowed, int node, ir::DType dt);
// A tensor_copy of `from` into `to` on the copies' engine of `node`, noted "verb node suffix".
std::optional<NoProgram> copy_tile(Emission& e, int block, int node, const Tile& from,
                                   const Tile& to, const char* verb, const char* suffix = "");

// ---- DMA access patterns and windows (hbm_access.cpp) ----
// The DMA access pattern of view `v` at `places`, written into `a` (an instruction's `hbm`: filled
// in place, the pattern is large); NoProgram where no pattern expresses the view.
std::optional<NoProgram> hbm_access(const Emission& e, const HbmView& v,
                                    const std::vector<Place>& places, Access& a);
HbmView identity_view(const Program& p, int buffer);
Window row_window(const Nest& nest, int row_tile, std::int64_t cols, Terms extra = {},
                  std::int64_t width = 0);
Window window(const Terms& terms, std::int64_t width);
std::vector<Place> places(const Emission& e, const Nest& nest, int node,
                          const std::vector<std::int64_t>& shape, int row_tile,
                          std::int64_t col_extent);
std::vector<Place> places(const Nest& nest, const Frame& f, const std::vector<std::int64_t>& out,
                          const std::vector<std::int64_t>& shape, int row_tile,
                          std::int64_t col_extent);

// ---- passes ----
std::optional<NoProgram> emit_group(Emission& e, int group);
// After every group: each output of Prefix::copies copied through SBUF, a loop nest each.
std::optional<NoProgram> emit_output_copies(Emission& e);
// True when `nest`'s group streams its free-axis reductions (split_reduction.h): no matmul, a
// reduction, and a free tile; emit_streamed() then emits the group's ops.
bool streams(const Emission& e, const Nest& nest);
std::optional<NoProgram> emit_streamed(Emission& e, Nest& nest);
// A nest with an online tiling (GroupTiling::online): its matmul's row streamed key tile by key
// tile with the running statistic's corrections (online_nest.cpp).
std::optional<NoProgram> emit_online(Emission& e, Nest& nest);
// After a whole-row nest (the masked row on chip whole, one masked select over it): the loops of
// the windows of fully masked key tiles guarded where that is proved exact (masked_tiles.cpp).
void skip_masked_tiles(Emission& e, const Nest& nest);
std::optional<NoProgram> emit_matmul(Emission& e, Nest& nest, int node);
Lowered<Tile> lhs_tile(Emission& e, const Nest& nest, int node, int block, int row_tile, int k_var,
                       std::int64_t k_tile);
// A matmul's N loop: N tiles of `tile` columns, their first column at `at`. With a wide store
// (GroupTiling::store) it runs inside a loop over stores of `store` columns, and the N tiles of
// one store are evacuated side by side into `store_buffer` ([rows, block x store]).
struct NLoop {
  std::int64_t tile = 0, store = 0;      // store == tile: one store per N tile
  int store_block = -1, store_var = -1;  // the loop over stores (the nest's body when none)
  int block = -1, var = -1;              // the loop over the N tiles (of one store)
  int store_buffer = -1;
  Terms at;
  bool wide() const { return store > tile; }
};
// Opens matmul `node`'s N loop in the nest's body (wide_store.cpp): wide where the tiling asks
// for it, N allows it and the result is not kept on chip (`keep`).
NLoop open_n_loop(Emission& e, const Nest& nest, int node, std::int64_t n_tile, bool keep);
// After a wide N loop: each row tile's [rows, store] of the store buffer stored to HBM.
std::optional<NoProgram> store_wide(Emission& e, Nest& nest, int node, const NLoop& n);
Lowered<Tile> load_rhs(Emission& e, const Nest& nest, int node, int block, int k_var,
                       std::int64_t k_tile, const Terms& n_at, std::int64_t n_tile);
// Where matmul `node`'s right-hand side y [.., K, N] is read from: K tile `k_var` of `k_tile`
// rows, the nest's batch terms, `columns` along N.
std::vector<Place> rhs_places(const Emission& e, const Nest& nest, int node, int k_var,
                              std::int64_t k_tile, const Place& columns);
std::optional<NoProgram> emit_transposed(Emission& e, Nest& nest, const std::vector<int>& nodes);
// The strip-long left operand matmul `node` reads before the loops over its columns (-1: none, per
// tile instead): the transposed view's source as it lies (OpPick::stationary), or, with `hoist`,
// x^T computed by the pick's hoist_pre once per strip (matmul_nest.cpp).
Lowered<int> strip_lhs(Emission& e, Nest& nest, int node, std::int64_t k_tile, bool hoist);
// The strip's x^T of matmul `node` computed by `pre` once, resident for the strip (buffer id).
Lowered<int> hoisted_lhs(Emission& e, Nest& nest, int node, std::int64_t k_tile,
                         const ir::Kernel& pre, Depth depth);
// Before the strip loop (in `block`): the right-hand side of each matmul of the nest that reads one
// from HBM, loaded whole into Nest::resident (GroupTiling::resident).
std::optional<NoProgram> load_resident_rhs(Emission& e, Nest& nest, int block);
// True when matmul `node` of `nest` loads its right-hand side in panels (GroupTiling::panel: an
// HBM tensor, not resident).
bool loads_rhs_panel(const Emission& e, const Nest& nest, int node);
// Matmul `node`'s right-hand side panel [K, width] with its first column at `at`, loaded in
// `block` (panel_rhs.cpp); the buffer, [k_tile, K / k_tile x width].
Lowered<int> load_rhs_panel(Emission& e, const Nest& nest, int node, int block, const Terms& at,
                            std::int64_t width);
// One op's lowering (or `program`, another of its pick's programs) on `operands`; the result in
// `dest` when given. `accumulate`: the block whose iterations the root instruction accumulates
// over.
Lowered<Tile> emit_lowering(Emission& e, int block, int node, const std::vector<Tile>& operands,
                            const Tile* dest, int accumulate, Depth depth,
                            const ir::Kernel* program = nullptr);
// False when the instruction is no DMA on a tile just loaded (emit it as usual).
Lowered<bool> fuse_dma_transpose(Emission& e, const sem::InstrSpec* spec, const ir::Node& step,
                                 std::vector<std::optional<Tile>>& tiles, std::size_t at);
const HbmView* hbm_view(const Emission& e, int node);  // the prefix's view, or its spill tensor's
void spill(Emission& e, int node);

std::int64_t largest_divisor(std::int64_t n, std::int64_t limit);

}  // namespace ts::lower

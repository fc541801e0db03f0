// A run of row-wise ops in one row-tile loop (group_nest.cpp): what a group's nest and a
// streamed nest (stream_nest.cpp) both emit row-wise ops with.
#pragma once

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "emission.h"
#include "tilesweep/lower/chunked_scan.h"
#include "tilesweep/lower/frame.h"

namespace ts::lower {

// A run of row-wise ops, in one row-tile loop: each op's operands (constants, the group's
// values, or loaded from HBM once for the run) through its lowering into a strip-long value.
struct RowOps {
  Emission& e;
  Nest& nest;
  int block = nest_loop(e, nest.body, "rt", nest.tiling.block);
  int row_tile = loop_var(block, nest.body);
  std::map<int, Tile> loaded;
  StridedLoads regions;  // the contiguous regions loaded for strided windows (onchip_steps)

  // Columns of a value per row tile, in the group.
  std::int64_t cols_of(int node) const {
    Frame f = e.frame(node);
    if (f.col < 0) return 1;
    return nest.free_tile > 0 && e.shape(node)[f.col] != 1 ? nest.free_tile : e.shape(node)[f.col];
  }

  // Columns of operand `in` of `node` per row tile: 1 for a per-row scalar, else its col extent
  // (the free tile in a free-tiled group).
  std::int64_t in_cols(int node, int in) const {
    const auto& s = e.shape(in);
    Frame f = e.frame(node);
    if (s.empty()) return 1;
    int lead = f.rank - static_cast<int>(s.size());
    int col_in_out = static_cast<int>(s.size()) - 1 + lead;
    // A reduction's input keeps its whole row (a free tile of it when streamed, stream_nest.cpp);
    // an element-wise operand follows the output.
    // A chunked scan, and a batch reduction beside it, read chunks (chunked_scan.h).
    if (e.prefix.has_axis[static_cast<std::size_t>(node)])
      return nest.streamed || chunks(node) ? nest.free_tile : s.back();
    if (col_in_out != f.col) return 1;
    if (s.back() == 1) return 1;
    return nest.free_tile > 0 ? nest.free_tile : s.back();
  }

  // The rows of operand `in` when `node` reduces across them (0 otherwise): all in one tile.
  Lowered<std::int64_t> rows_reduced(int node, int in) const {
    if (!e.prefix.reduces_rows[static_cast<std::size_t>(node)]) return 0;
    std::int64_t rows = e.shape(in)[e.shape(in).size() - 2];
    if (rows > e.target.sbuf.partitions)
      return NoProgram{
          fmt::format("'{}' reduces across {} partitions; at most {} in one tile so far",
                      e.kernel.nodes[node].op, rows, e.target.sbuf.partitions),
          node};
    return rows;
  }

  Lowered<Tile> operand(int source, std::size_t i, ir::DType dtype);
  // The (reader, input index) pairs `node`'s lowering reads: a region's operands, the inputs of
  // the producer absorbed into it, or its own inputs.
  std::vector<std::pair<int, int>> reads(int node) const;
  // The tiles of `node`'s operands (reads(node)), loaded for the run where they come from HBM.
  Lowered<std::vector<Tile>> operands_of(int node);
  // `node` into a strip-long value of the group, stored when something outside reads it (and
  // `stores`).
  std::optional<NoProgram> emit(int node);
  // The operand tile `node` writes its result over (GroupTiling::in_place, in_place.cpp), given
  // its operand tiles and the form of a value buffer of its own (dtype, buffer shape, and `own`:
  // the result's window and tile shape in it) in `memory` (PSUM: a partial in PSUM, taken
  // whatever GroupTiling::in_place says); nullopt when none may be. The operand's value (or
  // the run's load) is forgotten: the tile now holds `node`'s result.
  std::optional<Tile> in_place_dest(int node, const std::vector<Tile>& operands, ir::DType dtype,
                                    const Shape& buffer_shape, const Tile& own,
                                    sem::Memory memory = sem::Memory::Sbuf);
  // True when an op of the group emitted after `position` reads kernel node `in`.
  bool read_after(int in, std::size_t position) const;
  // True when `node`'s value goes to PSUM (GroupTiling::psum_partials, carried_reduction.cpp):
  // an fp32 element-wise value that only batch reductions of the nest read, not stored.
  bool partial_in_psum(int node) const;
  // A reduction along a batch dim (carried_reduction.cpp): folded into its running value.
  std::optional<NoProgram> carry(int node);
  // A scan along the free axis in a nest that cuts rows into chunks (scan_chunks.cpp): its chunk
  // step from the state the previous chunk ended in, then that state carried on.
  std::optional<NoProgram> chunk(int node);
  // True when `node` runs chunk by chunk in this nest: a free-axis scan or a batch reduction in
  // a nest with a chunk loop.
  bool chunks(int node) const {
    return nest.chunk_block >= 0 && nest.free_tile > 0 &&
           (free_axis_scan(e.kernel, node) || reduces_batch(e.kernel, node));
  }

  bool stores = true;
};

}  // namespace ts::lower

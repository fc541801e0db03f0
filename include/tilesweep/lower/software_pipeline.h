// Software pipelining of one loop of a program: `for i < n: A(i); B(i)` (A the loop body's
// first `split` items, B the rest) becomes
//
//   A(0); for i < n - 1: { A(i + 1); B(i) }; B(n - 1)
//
// so that on in-order engines the next iteration's first stage (a score matmul and its
// evacuation out of PSUM) is issued before this iteration's later stages (the softmax on other
// engines), and the two overlap. The values A hands to B live in multi-buffered tiles: in the
// steady state B reads the copy written one version before the latest (Inst::in_lag = 1), which
// needs two copies of each (Buffer::min_bufs = 2); the epilogue B(n - 1) reads the latest.
//
// Iterations are shifted by rewriting the loop's terms: every affine start in A's steady-state
// copy (DMA accesses, windows, moving attributes, guards of nested loops) gains the loop's step,
// and the prologue and epilogue copies take the loop variable's value 0 and n - 1 as constants.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tilesweep/lower/program.h"

namespace ts::lower {

// Pipelines loop `block` of `p` after its first `split` items. The loop must have at least two
// trips, no guard of its own, a parent loop (not the top level, which may be split over cores),
// no accumulation across its iterations; B must not write what A reads or writes (on chip or in
// HBM); A must not store to a tensor B loads; every on-chip value A writes and B reads must be
// written once per iteration by one instruction of A (the whole tile, or one window per trip of
// the loops inside A, covering the tile once), not accumulated, not read by its own writer. A
// buffer both stages use that B first writes whole at its top level and nothing outside the loop
// touches (one that buffer reuse gave a value of each stage) gets a copy of its own for B.
// Returns why not (and leaves `p` unchanged), or nullopt when `p` was rewritten.
std::optional<std::string> pipeline_loop(Program& p, int block, std::size_t split);

// Where the candidate space splits a loop: after the first item that evacuates a matmul result
// out of PSUM (the copy reading a PSUM tile, at the loop's top level or in a loop inside it)
// where items that compute follow it and pipeline_loop accepts the split, the first whose later
// stage reads a handed-over tile off the Tensor engine where there is one; nullopt when the loop
// has no such item.
std::optional<std::size_t> pipeline_split(const Program& p, int block);

// The loop of top-level nest `nest` (a block in blocks[0]'s items) the candidate space
// pipelines (GroupTiling::pipeline): the innermost loop with a pipeline_split that pipeline_loop
// accepts; nullopt when there is none.
std::optional<int> loop_to_pipeline(const Program& p, int nest);

// True when some instruction of `p` reads a copy written an iteration earlier (Inst::in_lag > 0):
// a loop of `p` is software-pipelined.
bool pipelined(const Program& p);

}  // namespace ts::lower

// The functional mode of the simulator: runs a candidate program instruction by instruction on
// real numbers, so that every lowering can be checked against the reference interpreter
// (ir::evaluate) on top of its Z3 proofs. Small shapes only: values are dense doubles.
#pragma once

#include <vector>

#include "tilesweep/ir/tensor.h"
#include "tilesweep/lower/program.h"

namespace ts::sim {

// Executes `p` sequentially: HBM buffers holding a kernel parameter start as `inputs[param]` (one
// tensor per parameter, 0-d for scalars), every other buffer as zeros; on-chip buffers hold one
// tile each (multi-buffering does not change values in a sequential run); loops are walked in
// order; a DMA copies its affine HBM region into or out of the tile (Access: offsets, strides,
// transposes, merged dims and broadcasts; an HBM alias reads its root row-major); operands may
// be column windows of wider on-chip buffers; every other instruction is evaluated by its
// semantics (the reference interpreter on a one-node kernel, float32 rounding after each
// instruction), adding into its output after iteration 0 of its `accumulate_block`. A program on
// several cores (Program::cores) runs every core's share: each top-level item on every core in
// turn, a top-level loop as the core's ceil(trips / cores) iterations, each core with its own
// SBUF and PSUM and the HBM shared (so a split that needs another core's on-chip values, or an
// accumulation across the split loop, computes wrong numbers and fails the check). Returns the
// HBM buffers holding kernel outputs, in output order. A malformed program (an operand whose
// tile does not fit the instruction, an access outside its tensor) is an InternalError naming
// the instruction; an input of the wrong shape is a UserError. Keeps no state: safe to call
// concurrently.
std::vector<ir::Tensor> execute(const lower::Program& p, const std::vector<ir::Tensor>& inputs);

}  // namespace ts::sim

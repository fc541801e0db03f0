// Element-wise regions (issue 17, activation folding): a connected set of element-wise ops whose
// intermediate values nothing else reads, as one tile-level kernel over the values the region
// reads from outside (literal constants inlined). Depth-1 synthesis finds the ISA instruction
// that computes a whole region where one exists — the ISA's fused functions from their element-
// wise definitions (x / (1 + exp(-x)) = activation(silu)), constant scales and shifts folded
// into an instruction's scale/bias — each proved equal to the region by Z3.
#pragma once

#include <utility>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/lower/tile_op.h"
#include "tilesweep/semantics/instr_spec.h"

namespace ts::lower {

struct RegionCandidate {
  int root = -1;
  std::vector<int>
      members;  // the other nodes of the region, sorted (computed inside its root's pick)
  // The tile op's parameters in order: each an operand (reader node, input index) of the region.
  std::vector<std::pair<int, int>> operands;
  TileOp op;
};

// Every candidate region of `k` of at least two ops (at most `max_ops`), per root the smaller
// ones first; at most `max_per_root` per root. Pruned by a bound (issue 17 item 7): a region
// that reads more than `max_tiles` full [P, F] tiles is left out — regions are synthesized as
// one instruction, so with `max_tiles` = max_tile_operands(isa) none could lower, and each
// such query costs a whole synthesis search (adamw's 16 variants asked hundreds).
std::vector<RegionCandidate> region_candidates(const ir::Kernel& k, int max_tiles, int max_ops = 6,
                                               int max_per_root = 12);

// The most operands one instruction of `isa` reads as whole tiles (a pattern not ending in a
// literal 1: the bundled ISAs' tensor_tensor and scalar_tensor_tensor read two; each other
// operand is a per-partition [P, 1] value or an immediate).
int max_tile_operands(const sem::InstrTable& isa);

}  // namespace ts::lower

// SwapWithSuccessor of Axon Algorithm 1: the graph with op1 moved below its successor op2.
#pragma once

#include <optional>
#include <vector>

#include "tilesweep/ir/graph.h"

namespace ts::mutate {

struct Swap {
  ir::Kernel graph;   // the whole rewritten kernel (compacted)
  ir::Kernel before;  // the local query: op2(op1(...)) over the pair's external inputs
  ir::Kernel after;   // the same inputs through the swapped pair
  int op1_origin = -1;
};

// op2 (a user of op1's output) is applied to each input of op1 in `through` (indices into
// op1's inputs) in place of op1's output; op1 is then applied to the results. nullopt when the
// shapes do not fit (the op semantics reject an operand).
std::optional<Swap> swap_with_successor(const ir::Kernel& g, int op1, int op2,
                                        const std::vector<int>& through);

}  // namespace ts::mutate

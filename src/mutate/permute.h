// A layout choice as a variant (issue 17): the kernel with dims 0 and 1 of its rank-3 values
// swapped, so that the lowering's frame ([batch, rows, cols]: rows on the partitions) puts the
// other leading dim on the partitions and iterates the first one as a batch loop. Mamba's
// [C, S, M] values computed as [S, C, M]: C (256) on the partitions instead of S (16), S a loop,
// and the sum over S a reduction along that loop (loop-carried accumulation in the lowering).
//
// Every op that works on rank-3 operands and treats their dims alike (element-wise ops, and ops
// with one `axis` attribute: reductions, scans, concats) runs on the swapped values, its axis
// remapped; a rank-3 input view (a parameter through one-operand ops: a reshape) enters through a
// transpose(., (1, 0, 2)), which the lowering reads as a DMA view, and a swapped output leaves
// through one. A swapped value read by an op that cannot swap, or a computed rank-3 value (a
// matmul's) read by a swapped op: no variant (the swap stays a closed region between the
// kernel's inputs and outputs, and the search's space sane). The whole
// kernel is proved equal to the original (propagate.cpp), like every other variant.
#pragma once

#include <optional>

#include "tilesweep/ir/graph.h"

namespace ts::mutate {

// nullopt when no op of `k` computes a rank-3 value it could swap, or the swapped region is not
// closed (above).
std::optional<ir::Kernel> swap_leading_dims(const ir::Kernel& k);

}  // namespace ts::mutate

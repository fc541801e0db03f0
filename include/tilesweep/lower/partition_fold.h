// Partition folding (issue 17, layout choices): a kernel whose values are all [P, C] tensors
// computed element-wise, where P is not a multiple of 128, leaves partitions idle (rope's halves
// are [64, L]; adamw's 10,944 rows are 85 full tiles and one of 64, or 96 tiles of 114).
// Every operand of such a kernel is a row-major tensor or a block of whole rows of one (a slice
// along axis 0, a part of a concat along axis 0), so one bijective reshape applied to all of them
// — [P, C] viewed as [P * f, C / f], f the least factor making every computed value's rows a
// multiple of the partitions (partitions / gcd(partitions, rows)) — keeps each element's position
// the same in every operand: element-wise ops commute with it (tests/lower/partition_fold_test.cpp
// proves it with Z3 for every op accepted here and for whole kernels), a row slice [a, b) becomes
// [a * f, b * f), and a concat along axis 0 stays one. The folded kernel works on all lanes, and
// its DMA runs stay contiguous.
//
// Shape-dependent: decided at concrete dims. The folded kernel keeps every node of `k` at its
// index (the compute ops' instruction choices carry over) with concrete shapes; each input node
// has the folded shape while its Param keeps the original (materialization gives the input's
// HBM tensor the Param's shape and reads it through a reshaped alias), and each output is a
// reshape of the folded value back to the original shape, appended last.
#pragma once

#include <optional>

#include "tilesweep/ir/graph.h"
#include "tilesweep/semantics/dim.h"

namespace ts::lower {

// The lowering form, or the proof form: every parameter an input node of its own shape
// followed by a reshape to the folded shape (a kernel prove_equivalent can compare with `k`).
enum class FoldForm { Lowering, Proof };

// nullopt when `k` does not fold: some value is not a [P, C] element-wise value (a reduction,
// a matmul, a transpose, a broadcast operand, a column slice, a position value, rank != 2), the
// values disagree on C, every compute value's rows already are a multiple of `partitions`, or
// the fold factor does not divide C.
std::optional<ir::Kernel> fold_partitions(const ir::Kernel& k, const sem::DimEnv& dims,
                                          int partitions = 128, FoldForm form = FoldForm::Lowering);

// True when compute node `node` of `k` is an op fold_partitions accepts as element-wise (given
// that its operands are scalars or have its shape).
bool folds_elementwise(const ir::Kernel& k, int node);

}  // namespace ts::lower

// Row-step folding (issue 17, on-chip access patterns): a kernel input x [M, N] read only through
// slices that step along its rows by one step s > 1 (maxpool's x[0::2, ..] and x[1::2, ..]) is
// viewed as [M / s, s * N], the s rows of a group side by side on one partition: row s * i + k of
// x is columns [k * N, (k + 1) * N) of row i of the view (the same row-major bytes). A slice
// x[a : e : s, b : c : t] is then the view's slice [a / s : a / s + rows, k * N + b : k * N + c :
// t] (k = a mod s): its rows contiguous, its step along the free axis, which a nest reads from one
// contiguous load of the row group through strided windows (GroupTiling::onchip_steps) instead of
// a DMA of one-element runs. tests/lower/row_step_fold_test.cpp proves each folded kernel equal
// to the original with Z3.
//
// Shape-dependent: decided at concrete dims (s divides M). Like partition folding, the folded
// kernel keeps every node of `k` at its index (the instruction choices carry over) with concrete
// shapes; each folded input node has the view's shape while its Param keeps the original
// (materialization reads the input's HBM tensor through a reshaped alias); outputs unchanged.
#pragma once

#include <optional>

#include "tilesweep/ir/graph.h"
#include "tilesweep/lower/partition_fold.h"
#include "tilesweep/semantics/dim.h"

namespace ts::lower {

// nullopt when no input of `k` folds: each rank-2 input whose every reader is a slice with the
// same row step s > 1 (s dividing its rows, column steps >= 1) folds; the others stay as they
// are. FoldForm::Proof: each folded input is its parameter followed by a reshape (a kernel
// prove_equivalent compares with `k`).
std::optional<ir::Kernel> fold_row_steps(const ir::Kernel& k, const sem::DimEnv& dims,
                                         FoldForm form = FoldForm::Lowering);

}  // namespace ts::lower

// Loop fusion (Axon §4.5): compute ops that share their batch dims and their row (partition)
// dim, where no op needs rows another op computes in the same strip, run in one loop nest —
// the fused group keeps the values between them on chip. Independent branches over the same
// rows (the RMS branch beside the matmul branch of RMSNorm + MatMul, three projections of one x)
// join too, and so do independent element-wise chains over the same rows (a whole element-wise
// DAG in one nest: adamw's four chains, rope's four products). A value broadcast along the batch
// dim a group carries a reduction over (a 1 there: mamba's delta * u) joins it too, computed once
// per strip before that loop (group_nest.cpp); where it would sit in a group that carries no such
// reduction, the groups are the same-rows ones. Shape-independent: groups are decided on symbolic
// dims.
#pragma once

#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/lower/frame.h"

namespace ts::lower {

// Fused groups of compute nodes in topological order (each group's nodes too). With `fuse`
// false every compute node is its own group. NoProgram for an op the tiler cannot place (a
// reduction along a batch dim, a scan along rows).
Lowered<std::vector<std::vector<int>>> fusion_groups(const ir::Kernel& k, bool fuse);

}  // namespace ts::lower

// Which of a kernel's symbolic dims can be split across devices, read from the kernel graph's
// element expressions (never from op names):
// - Parallel: every op indexes the dim as the same index on its operands and its result (or
//   broadcasts over it), no op reduces it, and it reaches an output. Each device computes its
//   block of the outputs; no communication.
// - Contracted: every op indexes it like that, except reductions (sum, max or min over a full
//   axis of exactly that size) and every such reduction is a kernel output that no other node
//   uses, and no output has the dim. Each device produces partial results that one all-reduce
//   (or reduce-scatter) per output combines. This is the conservative rule: a reduction feeding
//   further ops (RMSNorm's mean, softmax's sum, the first matmul of an MLP) is not offered.
// - Fixed: anything else: the dim's size is used as a value (mean divides by it), shifted,
//   sliced, concatenated, reshaped, scanned, appears in a compound size (N // 2), or sizes two
//   axes of one value (a block split would leave only the diagonal blocks).
#pragma once

#include <string>
#include <vector>

#include "tilesweep/ir/graph.h"

namespace ts::mesh {

enum class DimRole { Parallel, Contracted, Fixed };

const char* dim_role_name(DimRole r);

struct DimInfo {
  std::string dim;
  DimRole role = DimRole::Fixed;
  std::vector<int> reduced_at;  // Contracted: the (output) nodes reducing it, ascending
  sem::Reducer reducer = sem::Reducer::Sum;  // Contracted: how the partial results combine
  std::string reason;                        // Fixed: why, for reports
};

// One entry per Kernel::dims, in that order. Complexity: linear in the size of the bodies.
std::vector<DimInfo> classify_dims(const ir::Kernel& kernel);

}  // namespace ts::mesh

// group_extent over shapes and frames given as functions: the materializer's (the prefix's) and
// group_extent's own (computed from the kernel), one definition for both.
#pragma once

#include <algorithm>
#include <vector>

#include "tilesweep/lower/chunked_scan.h"
#include "tilesweep/lower/frame.h"
#include "tilesweep/lower/materialize.h"
#include "tilesweep/lower/split_reduction.h"

namespace ts::lower {

template <class ShapeOf, class FrameOf>
GroupExtent extent_of(const ir::Kernel& k, const std::vector<int>& group, ShapeOf shape_of,
                      FrameOf frame) {
  GroupExtent e;
  Frame first = frame(group.front());
  const auto& first_shape = shape_of(group.front());
  e.rows = first.row >= 0 ? first_shape[first.row] : 1;
  std::int64_t cols = -1;
  bool scans = false, other = false;  // chunkable: a free-axis scan, nothing but those beside
  for (int n : group) {
    const ir::Node& node = k.nodes[n];
    const auto& shape = shape_of(n);
    Frame f = frame(n);
    std::int64_t c = f.col >= 0 ? shape[f.col] : 1;
    if (is_matmul(node)) {
      e.has_matmul = true;
      e.matmul_n.push_back(c);
      e.elementwise = false;
    } else if (node.attrs.count("axis")) {
      e.elementwise = false;
      bool scan = free_axis_scan(k, n);
      scans = scans || scan;
      other = other || !(scan || reduces_batch(k, n));
      const auto& in = shape_of(node.inputs[0]);
      if (free_axis_reduction(k, n) && !in.empty())
        e.reduced_cols = std::max(e.reduced_cols, in.back());
    }
    if (cols >= 0 && c != cols) {
      e.elementwise = false;
      other = true;
    }
    cols = std::max(cols, c);
  }
  e.cols = std::max<std::int64_t>(cols, 1);
  e.chunkable = scans && !other && !e.has_matmul;
  return e;
}

}  // namespace ts::lower

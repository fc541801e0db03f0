#include "tilesweep/mesh/group.h"

#include <algorithm>

namespace ts::mesh {

int Group::size() const {
  int n = 1;
  for (int e : extents) n *= e;
  return n;
}

std::vector<int> Group::members() const {
  std::vector<int> out{base};
  for (std::size_t a = 0; a < extents.size(); ++a) {
    std::vector<int> next;
    next.reserve(out.size() * extents[a]);
    for (int m : out)
      for (int i = 0; i < extents[a]; ++i) next.push_back(m + i * strides[a]);
    out = std::move(next);
  }
  return out;
}

std::vector<int> Group::ring_order() const {
  std::vector<int> out{base};
  for (std::size_t a = 0; a < extents.size(); ++a) {
    std::vector<int> next;
    next.reserve(out.size() * extents[a]);
    for (std::size_t k = 0; k < out.size(); ++k)
      for (int i = 0; i < extents[a]; ++i) {
        int j = k % 2 == 0 ? i : extents[a] - 1 - i;  // reverse every other row
        next.push_back(out[k] + j * strides[a]);
      }
    out = std::move(next);
  }
  return out;
}

Group Group::along(int i) const {
  TS_CHECK(i >= 0 && i < static_cast<int>(extents.size()), "group axis {}", i);
  return Group{{extents[i]}, {strides[i]}, base};
}

int Group::spanned_axes() const {
  return static_cast<int>(
      std::count_if(extents.begin(), extents.end(), [](int e) { return e > 1; }));
}

Group group_over(const MeshShape& mesh, std::vector<int> axes) {
  std::sort(axes.begin(), axes.end());
  TS_CHECK(std::adjacent_find(axes.begin(), axes.end()) == axes.end(),
           "a mesh axis twice in a group");
  Group g;
  for (int a : axes) {
    TS_CHECK(a >= 0 && a < mesh.rank(), "axis {} of mesh {}", a, mesh.str());
    g.extents.push_back(mesh.sizes[a]);
    g.strides.push_back(mesh.stride(a));
  }
  return g;
}

Group contiguous_group(int r) { return Group{{r}, {1}, 0}; }

}  // namespace ts::mesh

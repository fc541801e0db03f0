// The devices taking part in one collective: those of a mesh that differ only along some of its
// axes (all y-neighbours of a device for a collective "over y"). Device ids are the mesh's
// row-major ids (mesh_shape.h).
#pragma once

#include <vector>

#include "tilesweep/mesh/mesh_shape.h"

namespace ts::mesh {

struct Group {
  std::vector<int> extents;  // per group axis, slowest first; each >= 1
  std::vector<int> strides;  // device-id distance between neighbours along that axis
  int base = 0;              // the member with coordinate 0 on every group axis

  int size() const;
  // Members in row-major order over the group axes (recursive doubling pairs i with i ^ 2^k).
  std::vector<int> members() const;
  // Members in boustrophedon (snake) order, the order a ring visits them: on a 2-D torus
  // whose rows wrap, consecutive members are physical neighbours (a Hamiltonian cycle).
  std::vector<int> ring_order() const;
  // The one-axis group through `base` along group axis i.
  Group along(int i) const;
  // Number of group axes with extent > 1.
  int spanned_axes() const;
};

// The group over mesh axes `axes` (indices, any order; sorted slowest first) through device 0.
Group group_over(const MeshShape& mesh, std::vector<int> axes);
// Devices 0 .. r-1 as one axis (a 1-D mesh of r devices).
Group contiguous_group(int r);

}  // namespace ts::mesh

// A logical device mesh: "1", "4", "2x2", "4x4" (job files' [mesh] shapes). Axes are named x, y,
// z, w in order, the first the slowest: device ids are row-major over the axes, so on "2x4"
// device (x, y) is 4 * x + y, and the devices along y are neighbours in id.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tilesweep/base/error.h"

namespace ts::mesh {

inline constexpr int kMaxMeshAxes = 4;
inline constexpr int kMaxMeshDevices = 1 << 16;

struct MeshShape {
  std::vector<int> sizes;  // one per axis, slowest first; each >= 1

  int rank() const { return static_cast<int>(sizes.size()); }
  int devices() const;
  // The device-id distance between neighbours along `axis` (product of the faster axes).
  int stride(int axis) const;
  static std::string axis_name(int axis);
  // The index of the axis named `name`, or -1.
  int axis_index(std::string_view name) const;
  // "2x2"; parse_mesh_shape(str()) == *this.
  std::string str() const;

  friend bool operator==(const MeshShape&, const MeshShape&) = default;
};

// Parses "4" or "2x2" (sizes >= 1 joined by 'x', at most kMaxMeshAxes axes, at most
// kMaxMeshDevices devices). Malformed text is a UserError at `loc` saying what a mesh looks like.
MeshShape parse_mesh_shape(std::string_view text, const SourceLoc& loc = {});

}  // namespace ts::mesh

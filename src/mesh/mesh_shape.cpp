#include "tilesweep/mesh/mesh_shape.h"

#include <fmt/format.h>

#include <charconv>

namespace ts::mesh {

int MeshShape::devices() const {
  int n = 1;
  for (int s : sizes) n *= s;
  return n;
}

int MeshShape::stride(int axis) const {
  TS_CHECK(axis >= 0 && axis < rank(), "axis {} of a rank-{} mesh", axis, rank());
  int s = 1;
  for (int a = axis + 1; a < rank(); ++a) s *= sizes[a];
  return s;
}

std::string MeshShape::axis_name(int axis) {
  static const char* const kNames[kMaxMeshAxes] = {"x", "y", "z", "w"};
  TS_CHECK(axis >= 0 && axis < kMaxMeshAxes, "axis {}", axis);
  return kNames[axis];
}

int MeshShape::axis_index(std::string_view name) const {
  for (int a = 0; a < rank(); ++a)
    if (axis_name(a) == name) return a;
  return -1;
}

std::string MeshShape::str() const { return fmt::format("{}", fmt::join(sizes, "x")); }

MeshShape parse_mesh_shape(std::string_view text, const SourceLoc& loc) {
  auto bad = [&](std::string_view why) {
    fail(loc,
         "bad mesh shape '{}': {}; write axis sizes >= 1 joined by 'x', as in \"4\" or \"2x2\"",
         text, why);
  };
  MeshShape m;
  std::int64_t devices = 1;
  std::size_t pos = 0;
  while (true) {
    std::size_t end = text.find('x', pos);
    std::string_view part =
        text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    if (part.empty()) bad("an axis size is missing");
    int v = 0;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || p != part.data() + part.size())
      bad(fmt::format("'{}' is not an axis size", part));
    if (v < 1) bad("axis sizes must be at least 1");
    devices *= v;
    if (devices > kMaxMeshDevices) bad(fmt::format("more than {} devices", kMaxMeshDevices));
    m.sizes.push_back(v);
    if (m.rank() > kMaxMeshAxes) bad(fmt::format("more than {} axes", kMaxMeshAxes));
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return m;
}

}  // namespace ts::mesh

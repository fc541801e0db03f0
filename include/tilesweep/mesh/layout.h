// Named-axis tensor layouts over a device mesh, after Axe (D/R/O): each tensor dim is either
// replicated (R) or sharded over one or more mesh axes (S(x), S(x*y): split in blocks, the first
// axis the slowest). Mesh axes no dim uses hold replicas, unless the tensor holds partial sums
// over them (P(x): every device a summand, a reduction still owed) or sits at a fixed coordinate
// on them (O(y=1): only the devices with y = 1 hold it). Text form: the dims in order, then the
// optional parts, e.g. "S(x)R", "RS(x*y)", "RR P(x)", "S(x)R O(y=1)".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tilesweep/mesh/mesh_shape.h"

namespace ts::mesh {

struct Layout {
  std::vector<std::vector<int>> dims;  // per tensor dim: the mesh axes it is sharded over; {} = R
  std::vector<int> partial;            // mesh axes over which the values are partial sums
  std::map<int, int> offset;           // mesh axis -> the one coordinate holding the tensor

  // A layout with every one of `rank` dims replicated.
  static Layout replicated(int rank);
  int rank() const { return static_cast<int>(dims.size()); }
  // The mesh axis `axis` shards dim d of, or -1 when no dim uses it.
  int dim_of_axis(int axis) const;
  // Number of blocks dim `d` is split into on `mesh`.
  std::int64_t split(int d, const MeshShape& mesh) const;
  // Devices holding the same block (product of the axes used by no dim, P or O).
  int replicas(const MeshShape& mesh) const;

  friend bool operator==(const Layout&, const Layout&) = default;
};

// Parses the text form for a tensor on `mesh`; an unknown axis, an axis used twice, an offset
// out of range or a malformed part is a UserError at `loc`. `rank` (when >= 0) must match.
Layout parse_layout(std::string_view text, const MeshShape& mesh, int rank = -1,
                    const SourceLoc& loc = {});
std::string format_layout(const Layout& layout);

// The per-device (local) shape of a tensor of `global` shape: each dim divided by its split;
// nullopt when a dim is not divisible by it (the layout does not apply to that shape).
std::optional<std::vector<std::int64_t>> local_shape(const std::vector<std::int64_t>& global,
                                                     const Layout& layout, const MeshShape& mesh);

}  // namespace ts::mesh

// The collectives that turn a tensor of one layout into another on the same mesh, axis by axis:
// P(a) -> R on a: all-reduce; P(a) -> S(a): reduce-scatter; S(a) on dim i -> R: all-gather;
// S(a) on dim i -> S(a) on dim j: all-to-all; R -> S(a) or R -> P(a): none (each device keeps
// its block / one device keeps the values). Axes needing the same collective form one group.
#pragma once

#include <vector>

#include "tilesweep/mesh/collective.h"
#include "tilesweep/mesh/layout.h"

namespace ts::mesh {

struct Redistribution {
  Collective kind = Collective::AllGather;
  std::vector<int> axes;  // the mesh axes of the group, slowest first

  friend bool operator==(const Redistribution&, const Redistribution&) = default;
};

// In the order reduce-scatter, all-reduce, all-to-all, all-gather (reductions first: they shrink
// or keep the data). UserError when no collective does it: different ranks or offsets, or a
// sharded or replicated tensor turned into partial sums of a sharded one.
std::vector<Redistribution> redistribute(const Layout& from, const Layout& to,
                                         const MeshShape& mesh);

}  // namespace ts::mesh

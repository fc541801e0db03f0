// Equalities between sizes that only some dims satisfy. A reshape of [S, C] to [S, H, D] needs
// `D * H * S == C * S`, which says C == D * H; a gate|up weight split in halves needs
// `N - F == F`, which says N == 2 * F. Solving such an equality into a canonical form lets the
// shape checker keep it as a precondition (checked when dims are bound), reject it when no dims
// satisfy it, and reject one that only renames a dim (K == N, M == 1: give them one name).
#pragma once

#include <string>

#include "tilesweep/semantics/dim.h"

namespace ts::sem {

struct DimRelation {
  enum Kind {
    Always,    // every dims satisfy it (a == b as sizes)
    Never,     // no dims >= 1 satisfy it
    Renaming,  // one dim equals another dim or a constant: a naming mistake, not a relation
    Relation,  // some dims satisfy it: a precondition
  };
  Kind kind = Always;
  // The equality with common factors divided out, each side a sum of positive terms, a dim
  // standing alone on the left where one does (`C == D * H`, `N == 2 * F`). Set for Renaming
  // and Relation.
  Dim lhs, rhs;
};

// Relates `a == b` for sizes without floor divisions over dims >= 1. Never is only answered
// where it is certain (a constant difference, a sum of positive terms, or a divisibility
// argument); an equality it cannot decide is a Relation, so that binding dims decides it.
DimRelation relate(const Dim& a, const Dim& b);

}  // namespace ts::sem

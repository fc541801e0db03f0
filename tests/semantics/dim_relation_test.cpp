#include "tilesweep/semantics/dim_relation.h"

#include <gtest/gtest.h>

namespace ts::sem {
namespace {

Dim C = Dim::symbol("C"), D = Dim::symbol("D"), F = Dim::symbol("F"), H = Dim::symbol("H"),
    K = Dim::symbol("K"), M = Dim::symbol("M"), N = Dim::symbol("N"), S = Dim::symbol("S");

const char* kind_name(DimRelation::Kind k) {
  switch (k) {
    case DimRelation::Always:
      return "always";
    case DimRelation::Never:
      return "never";
    case DimRelation::Renaming:
      return "renaming";
    case DimRelation::Relation:
      return "relation";
  }
  return "?";
}

std::string run(const Dim& a, const Dim& b) {
  DimRelation r = relate(a, b);
  std::string s = kind_name(r.kind);
  if (r.kind == DimRelation::Renaming || r.kind == DimRelation::Relation)
    s += ": " + r.lhs.str() + " == " + r.rhs.str();
  return s;
}

TEST(DimRelation, SolvesAndClassifies) {
  struct Case {
    Dim a, b;
    const char* expect;
  } cases[] = {
      // A reshape of [S, C] to [S, H, D]: the common factor S divides out.
      {D * H * S, C * S, "relation: C == D * H"},
      {C * S, D * H * S, "relation: C == D * H"},
      // A gate|up weight split in halves, from either side.
      {N - F, F, "relation: N == 2 * F"},
      {F, N - F, "relation: N == 2 * F"},
      {Dim(2) * F, N, "relation: N == 2 * F"},
      // Common integer factors divide out too.
      {Dim(4) * F, Dim(2) * N, "relation: N == 2 * F"},
      // No dim stands alone: the side with fewer terms goes left.
      {Dim(2) * M + Dim(3) * N, K * D, "relation: D * K == 2 * M + 3 * N"},
      {M + N, C + D + K, "relation: M + N == C + D + K"},
      // Only renames a dim.
      {M * N, M * M, "renaming: M == N"},
      {M * N, N, "renaming: M == 1"},
      {K, N, "renaming: K == N"},
      {M, Dim(4), "renaming: M == 4"},
      // No dims >= 1 satisfy these.
      {M, M + Dim(1), "never"},
      {C + D * H, Dim(0), "never"},
      {Dim(2) * M, Dim(2) * N + Dim(1), "never"},
      {M * N + M, Dim(1), "never"},
      // Equal as sizes.
      {M * N, N * M, "always"},
      {Dim(2) * (M + N), Dim(2) * M + Dim(2) * N, "always"},
  };
  for (const auto& c : cases)
    EXPECT_EQ(run(c.a, c.b), c.expect) << c.a.str() << " == " << c.b.str();
}

}  // namespace
}  // namespace ts::sem

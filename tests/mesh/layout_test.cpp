#include "tilesweep/mesh/layout.h"

#include <gtest/gtest.h>

#include "tilesweep/mesh/redistribute.h"

namespace ts::mesh {
namespace {

TEST(Layout, ParsesAndFormats) {
  MeshShape m = parse_mesh_shape("2x4");
  struct Case {
    const char* text;
    std::vector<std::vector<int>> dims;
    std::vector<int> partial;
    std::map<int, int> offset;
    int replicas;
  } cases[] = {
      {"S(x)R", {{0}, {}}, {}, {}, 4},
      {"RS(y)", {{}, {1}}, {}, {}, 2},
      {"S(x)S(y)", {{0}, {1}}, {}, {}, 1},
      {"S(x*y)R", {{0, 1}, {}}, {}, {}, 1},
      {"RR", {{}, {}}, {}, {}, 8},
      {"RR P(x)", {{}, {}}, {0}, {}, 4},
      {"S(y)R O(x=1)", {{1}, {}}, {}, {{0, 1}}, 1},
      {"", {}, {}, {}, 8},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Layout l = parse_layout(c.text, m);
    EXPECT_EQ(l.dims, c.dims);
    EXPECT_EQ(l.partial, c.partial);
    EXPECT_EQ(l.offset, c.offset);
    EXPECT_EQ(l.replicas(m), c.replicas);
    EXPECT_EQ(format_layout(l), c.text);
  }
}

TEST(Layout, RejectsBadText) {
  MeshShape m = parse_mesh_shape("2x2");
  struct Case {
    const char* text;
    int rank;
    const char* why;
  } cases[] = {
      {"S(q)R", -1, "'q' is not an axis of the mesh"},
      {"S(z)R", -1, "'z' is not an axis of the mesh"},
      {"S(x)S(x)", -1, "axis x is used twice"},
      {"S(x", -1, "expected ')'"},
      {"SR", -1, "expected '('"},
      {"S(x)R", 3, "it has 2 dims, the tensor 3"},
      {"RR O(y=2)", -1, "the offset on y must be a coordinate from 0 to 1"},
      {"S(x)R P(x)", -1, "axis x is used twice"},
      {"RQ", -1, "unexpected 'Q'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      parse_layout(c.text, m, c.rank);
      ADD_FAILURE() << "accepted";
    } catch (const UserError& e) {
      EXPECT_EQ(
          e.message(),
          fmt::format("bad layout '{}' on mesh 2x2: {}; write R or S(axes) per dim, then optional "
                      "P(axes) and O(axis=coord), as in \"S(x)R\"",
                      c.text, c.why));
    }
  }
}

TEST(Layout, LocalShapes) {
  MeshShape m = parse_mesh_shape("2x4");
  struct Case {
    const char* layout;
    std::vector<std::int64_t> global;
    std::optional<std::vector<std::int64_t>> local;
  } cases[] = {
      {"S(x)R", {256, 512}, std::vector<std::int64_t>{128, 512}},
      {"RS(y)", {256, 512}, std::vector<std::int64_t>{256, 128}},
      {"S(x)S(y)", {256, 512}, std::vector<std::int64_t>{128, 128}},
      {"S(x*y)R", {256, 512}, std::vector<std::int64_t>{32, 512}},
      {"RR", {3, 5}, std::vector<std::int64_t>{3, 5}},
      {"RS(y)", {256, 6}, std::nullopt},
      {"S(x*y)R", {12, 1}, std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.layout);
    EXPECT_EQ(local_shape(c.global, parse_layout(c.layout, m), m), c.local);
  }
}

TEST(Redistribute, LayoutPairsImplyCollectives) {
  MeshShape m = parse_mesh_shape("2x2");
  using C = Collective;
  struct Case {
    const char* from;
    const char* to;
    std::vector<Redistribution> expected;
  } cases[] = {
      {"S(x)R", "S(x)R", {}},
      {"S(x)R", "RR", {{C::AllGather, {0}}}},
      {"S(x)S(y)", "RR", {{C::AllGather, {0, 1}}}},
      {"S(x)R", "RS(x)", {{C::AllToAll, {0}}}},
      {"RR P(x)", "RR", {{C::AllReduce, {0}}}},
      {"RR P(x)", "S(x)R", {{C::ReduceScatter, {0}}}},
      {"RS(y) P(x)", "RR", {{C::AllReduce, {0}}, {C::AllGather, {1}}}},
      {"RR", "S(x)S(y)", {}},
      {"RR", "RR P(x,y)", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.from) + " -> " + c.to);
    EXPECT_EQ(redistribute(parse_layout(c.from, m), parse_layout(c.to, m), m), c.expected);
  }
  EXPECT_THROW(redistribute(parse_layout("S(x)R", m), parse_layout("RR P(x)", m), m), UserError);
  EXPECT_THROW(redistribute(parse_layout("RR", m), parse_layout("RR O(x=1)", m), m), UserError);
}

}  // namespace
}  // namespace ts::mesh

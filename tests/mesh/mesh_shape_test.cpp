#include "tilesweep/mesh/mesh_shape.h"

#include <gtest/gtest.h>

namespace ts::mesh {
namespace {

TEST(MeshShape, ParsesSizes) {
  struct Case {
    const char* text;
    std::vector<int> sizes;
    int devices;
  } cases[] = {
      {"1", {1}, 1},
      {"4", {4}, 4},
      {"2x2", {2, 2}, 4},
      {"4x4", {4, 4}, 16},
      {"2x4x2", {2, 4, 2}, 16},
      {"16", {16}, 16},
      {"1x8", {1, 8}, 8},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    MeshShape m = parse_mesh_shape(c.text);
    EXPECT_EQ(m.sizes, c.sizes);
    EXPECT_EQ(m.devices(), c.devices);
    EXPECT_EQ(m.str(), c.text);
  }
}

TEST(MeshShape, AxesAndStrides) {
  MeshShape m = parse_mesh_shape("2x4x2");
  EXPECT_EQ(m.axis_index("x"), 0);
  EXPECT_EQ(m.axis_index("y"), 1);
  EXPECT_EQ(m.axis_index("z"), 2);
  EXPECT_EQ(m.axis_index("w"), -1);
  EXPECT_EQ(m.stride(0), 8);
  EXPECT_EQ(m.stride(1), 2);
  EXPECT_EQ(m.stride(2), 1);
}

TEST(MeshShape, RejectsMalformedText) {
  struct Case {
    const char* text;
    const char* why;
  } cases[] = {
      {"0", "axis sizes must be at least 1"},  {"2x", "an axis size is missing"},
      {"ax2", "'a' is not an axis size"},      {"", "an axis size is missing"},
      {"x2", "an axis size is missing"},       {"2x0", "axis sizes must be at least 1"},
      {"-1", "axis sizes must be at least 1"}, {"2X2", "'2X2' is not an axis size"},
      {"2 x2", "'2 ' is not an axis size"},    {"1x1x1x1x1", "more than 4 axes"},
      {"256x512", "more than 65536 devices"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      parse_mesh_shape(c.text);
      ADD_FAILURE() << "accepted";
    } catch (const UserError& e) {
      EXPECT_EQ(e.message(),
                fmt::format("bad mesh shape '{}': {}; write axis sizes >= 1 joined by 'x', as in "
                            "\"4\" or \"2x2\"",
                            c.text, c.why));
    }
  }
}

TEST(MeshShape, ErrorCarriesLocation) {
  try {
    parse_mesh_shape("2x", SourceLoc{"job.toml", 12, 10});
    ADD_FAILURE() << "accepted";
  } catch (const UserError& e) {
    EXPECT_EQ(e.loc().line, 12);
    EXPECT_EQ(std::string(e.what()).rfind("job.toml:12:10: error: bad mesh shape '2x'", 0), 0u)
        << e.what();
  }
}

}  // namespace
}  // namespace ts::mesh

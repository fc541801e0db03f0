#include "args.h"

#include <gtest/gtest.h>

#include "tilesweep/base/error.h"

namespace ts::cli {
namespace {

TEST(Args, Shape) {
  EXPECT_EQ(parse_shape_arg("M=4,N=16"), (sem::DimEnv{{"M", 4}, {"N", 16}}));
  struct Case {
    const char* text;
    const char* error;
  } bad[] = {
      {"", "error: --shape is empty; expected NAME=INT[,NAME=INT...], e.g. --shape M=64,N=32"},
      {"M4", "error: --shape: expected NAME=INT, got 'M4' (e.g. --shape M=64,N=32)"},
      {"M=4,", "error: --shape: expected NAME=INT, got '' (e.g. --shape M=64,N=32)"},
      {"M=x", "error: --shape: expected NAME=INT, got 'M=x' (e.g. --shape M=64,N=32)"},
      {"M=0", "error: --shape: M must be at least 1, got 0"},
      {"M=1,M=2", "error: --shape: M is given twice"},
      {"4=4", "error: --shape: expected NAME=INT, got '4=4' (e.g. --shape M=64,N=32)"},
  };
  for (const auto& c : bad) {
    try {
      parse_shape_arg(c.text);
      ADD_FAILURE() << c.text;
    } catch (const UserError& e) {
      EXPECT_STREQ(e.what(), c.error);
    }
  }
}

TEST(Args, Input) {
  EXPECT_EQ(parse_input_arg("x=a.npy"), (std::pair<std::string, std::string>{"x", "a.npy"}));
  EXPECT_THROW(parse_input_arg("x"), UserError);
  EXPECT_THROW(parse_input_arg("=a.npy"), UserError);
}

}  // namespace
}  // namespace ts::cli

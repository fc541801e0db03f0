// A plan built from another plan's verdicts asks the solver nothing and prepares the same
// spaces: what lets rank 0 prove once and hand the proofs to the other ranks.
#include <gtest/gtest.h>

#include "tilesweep/sweep/job.h"
#include "tilesweep/sweep/plan.h"

namespace ts::sweep {
namespace {

TEST(Plan, SharedVerdictsReplaceEverySolverQuery) {
  Job job = load_job(std::string(TS_SOURCE_DIR) + "/tests/sweep/data/small.toml");
  Plan first(job);
  ASSERT_GT(first.solver_queries(), 0u);
  Plan second(job, "", first.verdicts_text());
  EXPECT_EQ(second.solver_queries(), 0u);
  EXPECT_EQ(second.verdicts_text(), first.verdicts_text());
  ASSERT_EQ(second.spaces().size(), first.spaces().size());
  for (std::size_t i = 0; i < first.spaces().size(); ++i)
    EXPECT_EQ(second.spaces()[i].space->size(), first.spaces()[i].space->size()) << i;
  EXPECT_EQ(second.candidates(), first.candidates());
  ASSERT_EQ(second.proofs().size(), first.proofs().size());
  for (std::size_t i = 0; i < first.proofs().size(); ++i) {
    EXPECT_EQ(second.proofs()[i].text, first.proofs()[i].text) << i;
    EXPECT_EQ(second.proofs()[i].verdict, first.proofs()[i].verdict) << i;
  }
}

}  // namespace
}  // namespace ts::sweep

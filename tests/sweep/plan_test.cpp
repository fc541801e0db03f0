// A plan built from another plan's verdicts asks the solver nothing and prepares the same
// spaces: what lets rank 0 prove once and hand the proofs to the other ranks.
#include "tilesweep/sweep/plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <condition_variable>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include "tilesweep/mesh/mesh_cost.h"
#include "tilesweep/mesh/sharding.h"
#include "tilesweep/mesh/topology.h"
#include "tilesweep/sim/roofline.h"
#include "tilesweep/sweep/job.h"
#include "tilesweep/sweep/run_identity.h"
#include "tilesweep/sweep/synthesis_file.h"

namespace ts::sweep {
namespace {

TEST(Plan, SharedVerdictsReplaceEverySolverQuery) {
  Job job = load_job(std::string(TS_SOURCE_DIR) + "/tests/sweep/data/small.toml");
  Plan first(job);
  ASSERT_GT(first.solver_queries(), 0u);
  Plan second(job, {.shared_verdicts = first.verdicts_text()});
  EXPECT_EQ(second.solver_queries(), 0u);
  EXPECT_EQ(second.verdicts_text(), first.verdicts_text());
  ASSERT_EQ(second.spaces().size(), first.spaces().size());
  for (std::size_t i = 0; i < first.spaces().size(); ++i)
    EXPECT_EQ(second.spaces()[i].space->size(), first.spaces()[i].space->size()) << i;
  EXPECT_EQ(second.candidates(), first.candidates());
  // Without [mesh]: mesh "1" only, no sharding, one space per (kernel, target, shape).
  ASSERT_EQ(first.meshes().size(), 1u);
  EXPECT_EQ(first.keys(), static_cast<int>(first.spaces().size()));
  for (std::size_t i = 0; i < first.spaces().size(); ++i) {
    const SpaceEntry& e = first.spaces()[i];
    EXPECT_EQ(e.setting.mesh, "1");
    EXPECT_EQ(e.setting.sharding, "");
    EXPECT_EQ(e.key, static_cast<int>(i));
    EXPECT_EQ(e.dims, shape_env(job.kernels[e.kernel].shapes[e.shape]));
    EXPECT_EQ(e.latency(1234.5), 1234.5);
  }
  ASSERT_EQ(second.proofs().size(), first.proofs().size());
  for (std::size_t i = 0; i < first.proofs().size(); ++i) {
    EXPECT_EQ(second.proofs()[i].text, first.proofs()[i].text) << i;
    EXPECT_EQ(second.proofs()[i].verdict, first.proofs()[i].verdict) << i;
  }
}

// The plan digest: the same for the same plan however it was prepared (from another plan's
// verdicts, as ranks > 0 do), different when what decides the unit ids differs.
TEST(Plan, DigestFollowsWhatDecidesTheUnitIds) {
  Job job = load_job(std::string(TS_SOURCE_DIR) + "/tests/sweep/data/other.toml");
  Plan first(job);
  const std::string digest = plan_digest(first);
  EXPECT_EQ(digest.size(), 16u);
  EXPECT_EQ(plan_digest(Plan(job, {.shared_verdicts = first.verdicts_text()})), digest);
  Job units = job;
  units.search.unit_size = 7;
  EXPECT_NE(plan_digest(Plan(units, {.shared_verdicts = first.verdicts_text()})), digest);
  Job lowerings = job;
  lowerings.search.max_lowerings = 1;
  EXPECT_NE(plan_digest(Plan(lowerings, {.shared_verdicts = first.verdicts_text()})), digest);
}

// A resumed run starts from the records an earlier plan saved (`<archive>.synthesis`): it
// searches nothing, and builds the same plan (digest) and the same lowerings (proof records).
TEST(Plan, SynthesisRecordsReplaceTheSearch) {
  Job job = load_job(std::string(TS_SOURCE_DIR) + "/tests/sweep/data/other.toml");
  Plan first(job);
  ASSERT_GT(first.synthesis_searches(), 0u);
  std::vector<std::string> told;
  Plan again(job, {.shared_verdicts = first.verdicts_text(),
                   .synthesis_records = first.synthesis_records(),
                   .stage = [&](const std::string& s) { told.push_back(s); }});
  EXPECT_EQ(again.synthesis_searches(), 0u);
  EXPECT_EQ(plan_digest(again), plan_digest(first));
  ASSERT_EQ(again.proofs().size(), first.proofs().size());
  for (std::size_t i = 0; i < first.proofs().size(); ++i)
    EXPECT_EQ(again.proofs()[i].text, first.proofs()[i].text) << i;
  ASSERT_FALSE(told.empty());
  EXPECT_NE(told.front().find("synthesis records"), std::string::npos) << told.front();
}

// The records file: read back as written; another tool version, a changed byte or a missing
// file read as no records.
TEST(SynthesisFile, RoundTripVersionAndDamage) {
  const std::string path = ::testing::TempDir() + "/plan_test.synthesis";
  const std::string records = "0123456789abcdef 1 2 3 tensor_tensor\nfedcba9876543210 4 5\n";
  write_synthesis_records(path, "0.1.0", records);
  EXPECT_EQ(read_synthesis_records(path, "0.1.0"), records);
  EXPECT_EQ(read_synthesis_records(path, "0.2.0"), "");
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);
    f.put('9');
  }
  EXPECT_EQ(read_synthesis_records(path, "0.1.0"), "");
  EXPECT_EQ(read_synthesis_records(path + ".missing", "0.1.0"), "");
  EXPECT_EQ(synthesis_path("results/a.h5"), "results/a.h5.synthesis");
}

// With [mesh] shapes ["1", "2"]: mesh "1" as without a mesh, then one space per sharding choice
// of the 2-device mesh, each built at its local shape, with its collectives and the roofline of
// the whole kernel over the devices.
TEST(Plan, MeshSpacesForEveryShardingAtTheLocalShape) {
  const std::string dir = std::string(TS_SOURCE_DIR) + "/tests/sweep/data";
  Job job = parse_job(R"(
name = "plan-mesh"
targets = ["trn1"]
[[kernel]]
file = "../../../jobs/kernels/axon/matmul.py"
shapes = [{ M = 256, K = 512, N = 128 }]
[search]
max_block = 2
[mesh]
shapes = ["1", "2"]
)",
                      dir + "/plan-mesh.toml");
  Plan plan(job);
  ASSERT_EQ(plan.meshes().size(), 2u);
  EXPECT_EQ(plan.keys(), 2);
  const target::Target& t = target::builtin_target("trn1");
  const ir::Kernel& k = plan.spaces().front().prepared->variants.variants[0].kernel;
  const sem::DimEnv global = {{"M", 256}, {"K", 512}, {"N", 128}};
  const double roof = sim::roofline(k, global, t).bound_ns;
  const mesh::MeshShape two = mesh::parse_mesh_shape("2");
  std::vector<mesh::ShardingChoice> choices = mesh::sharding_choices(k, two, global);
  ASSERT_EQ(plan.spaces().size(), 1 + choices.size());

  const SpaceEntry& one = plan.spaces()[0];
  EXPECT_EQ(one.setting.mesh, "1");
  EXPECT_EQ(one.setting.sharding, "");
  EXPECT_EQ(one.key, 0);
  EXPECT_EQ(one.dims, global);
  EXPECT_DOUBLE_EQ(one.roofline_ns, roof);

  std::set<std::string> texts;
  const mesh::Topology topo = mesh::topology_for(t);
  for (std::size_t i = 0; i < choices.size(); ++i) {
    const SpaceEntry& e = plan.spaces()[1 + i];
    SCOPED_TRACE(choices[i].text);
    EXPECT_EQ(e.setting.mesh, "2");
    EXPECT_EQ(e.key, 1);
    EXPECT_EQ(e.setting.sharding, choices[i].text);
    texts.insert(e.setting.sharding);
    EXPECT_EQ(e.dims, *choices[i].local_dims(global));
    EXPECT_DOUBLE_EQ(e.roofline_ns, roof / 2);
    double comm = mesh::mesh_cost(0, choices[i].collectives(global), two, topo).total_ns;
    EXPECT_DOUBLE_EQ(e.setting.collective_ns, comm);
    EXPECT_DOUBLE_EQ(e.latency(1000), 1000 + comm);
  }
  // The 1-D mesh's choices: replicate, a split of each of M, K (+ the reduce-scatter form), N.
  EXPECT_EQ(texts, (std::set<std::string>{"replicate", "M:x", "K:x", "K:x+rs", "N:x"}));
  auto space = [&](const std::string& text) {
    for (const auto& e : plan.spaces())
      if (e.setting.sharding == text) return &e;
    return static_cast<const SpaceEntry*>(nullptr);
  };
  EXPECT_EQ(space("M:x")->dims.at("M"), 128);
  EXPECT_EQ(space("K:x")->dims.at("K"), 256);
  EXPECT_EQ(space("N:x")->dims.at("N"), 64);
  EXPECT_EQ(space("replicate")->dims, global);
  EXPECT_EQ(space("M:x")->setting.collective_ns, 0);
  EXPECT_GT(space("K:x")->setting.collective_ns, 0);
  EXPECT_GT(space("K:x+rs")->setting.collective_ns, 0);
  // Every space has its units, in plan order.
  std::vector<std::int64_t> per(plan.spaces().size(), 0);
  for (const auto& u : plan.units()) per[u.space] += u.count;
  for (std::size_t s = 0; s < per.size(); ++s)
    EXPECT_EQ(per[s], plan.spaces()[s].space->size()) << s;
}

// Two ranks' proof share, played by two plans on two threads meeting at each exchange: every
// synthesis search of the job runs on exactly one of them, each proves less than one plan
// alone, and both build the same spaces with the same lowerings as that plan.
TEST(Plan, ProofShareSplitsProofsAndSearches) {
  Job job = load_job(std::string(TS_SOURCE_DIR) + "/tests/sweep/data/small.toml");
  Plan all(job);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> round(2);
  int arrived = 0, generation = 0;
  auto exchange = [&](int rank, const std::string& mine) {  // an allgather of two
    std::unique_lock lock(mu);
    round[rank] = mine;
    int g = generation;
    if (++arrived == 2) {
      arrived = 0, ++generation;
      cv.notify_all();
    } else {
      cv.wait(lock, [&] { return generation != g; });
    }
    return round[0] + round[1];
  };
  std::unique_ptr<Plan> halves[2];
  std::thread other([&] {
    halves[1] = std::make_unique<Plan>(
        job, PlanInputs{.share = {1, 2, [&](const std::string& m) { return exchange(1, m); }}});
  });
  halves[0] = std::make_unique<Plan>(
      job, PlanInputs{.share = {0, 2, [&](const std::string& m) { return exchange(0, m); }}});
  other.join();
  auto lowerings = [](const Plan& p) {
    std::vector<std::string> out;
    for (const auto& r : p.proofs())
      out.push_back(r.kind + " " + r.kernel + " " + r.text + " " + r.verdict);
    return out;
  };
  EXPECT_EQ(halves[0]->synthesis_searches() + halves[1]->synthesis_searches(),
            all.synthesis_searches());
  EXPECT_EQ(halves[0]->seeds_simulated() + halves[1]->seeds_simulated(), all.seeds_simulated());
  for (const auto& half : halves) {
    EXPECT_GT(half->seeds_simulated(), 0);
    for (std::size_t i = 0; i < all.spaces().size(); ++i) {  // the same pruners, bit for bit
      const PruneBounds &a = all.spaces()[i].pruner.bounds(),
                        &h = half->spaces()[i].pruner.bounds();
      EXPECT_EQ(std::tie(h.keep_ns, h.variant0_ns, h.unfused_ns, h.seeds),
                std::tie(a.keep_ns, a.variant0_ns, a.unfused_ns, a.seeds))
          << i;
    }
    EXPECT_GT(half->synthesis_searches(), 0u);
    EXPECT_GT(half->solver_queries(), 0u);
    EXPECT_LT(half->solver_queries(), all.solver_queries());
    ASSERT_EQ(half->spaces().size(), all.spaces().size());
    EXPECT_EQ(lowerings(*half), lowerings(all));
    for (std::size_t i = 0; i < all.spaces().size(); ++i) {
      ASSERT_EQ(half->spaces()[i].space->size(), all.spaces()[i].space->size()) << i;
      for (std::int64_t c = 0; c < all.spaces()[i].space->size(); c += 7)
        ASSERT_EQ(half->spaces()[i].space->describe(c), all.spaces()[i].space->describe(c))
            << i << " " << c;
    }
  }
}

// A section budget: large sections sampled (the same draw for the same seed), small ones whole,
// units cut over the sample.
TEST(Plan, SectionBudgetSamplesLargeSections) {
  Job job = load_job(std::string(TS_SOURCE_DIR) + "/tests/sweep/data/small.toml");
  job.search.max_section_candidates = 20;
  Plan sampled(job);
  EXPECT_LT(sampled.candidates(), sampled.space_candidates());
  std::int64_t in_units = 0;
  for (const auto& u : sampled.units()) in_units += u.count;
  EXPECT_EQ(in_units, sampled.candidates());
  bool some_sampled = false;
  for (const auto& e : sampled.spaces()) {
    for (const auto& part : e.sample.parts()) {
      EXPECT_LE(part.count, 20);
      EXPECT_EQ(part.count, std::min<std::int64_t>(20, part.section.size));
      some_sampled = some_sampled || part.sampled();
    }
    for (std::int64_t p = 0; p < e.sample.size(); ++p) {
      std::int64_t i = e.sample.index(p);
      EXPECT_GE(i, 0);
      EXPECT_LT(i, e.space->size());
    }
  }
  EXPECT_TRUE(some_sampled);
  Plan again(job, {.shared_verdicts = sampled.verdicts_text()});
  for (std::size_t s = 0; s < sampled.spaces().size(); ++s)
    for (std::int64_t p = 0; p < sampled.spaces()[s].sample.size(); ++p)
      ASSERT_EQ(again.spaces()[s].sample.index(p), sampled.spaces()[s].sample.index(p));
}

}  // namespace
}  // namespace ts::sweep

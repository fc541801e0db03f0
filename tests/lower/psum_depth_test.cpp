// The PE's PSUM tiles deepened into the banks their nest leaves free at bufs = 3 (psum_depth.cpp),
// and a hoisted x^T transposed by the DMA loaded straight into its buffer (op_emission.cpp,
// load_into_dest): on sampled candidates of NKIBench kernels, the programs fit PSUM, leave no
// bank such a tile could still take at bufs = 3, keep the candidate's depth below it, copy no
// DMA-transposed tile, and compute the reference's numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "reference_check.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/sim/execute.h"
#include "tilesweep/sweep/check.h"

namespace ts::lower {
namespace {

struct DepthCase {
  std::string kernel;  // an NKIBench kernel
  std::string target;
  sem::DimEnv dims;
  bool deepened;  // some candidate's PE tile in PSUM holds more than three copies
};

void PrintTo(const DepthCase& c, std::ostream* os) { *os << c.kernel << " " << c.target; }

class PsumDepth : public ::testing::TestWithParam<DepthCase> {};

int banks_of(const Buffer& b, const target::Target& t) {
  return static_cast<int>((b.bytes_per_partition() + t.psum.bank_bytes - 1) / t.psum.bank_bytes);
}

TEST_P(PsumDepth, AccumulatorsTakeTheFreeBanks) {
  const DepthCase& c = GetParam();
  ir::Module m =
      ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/nkibench/" + c.kernel + ".py",
                      sem::OpTable::builtin());
  const ir::Kernel& k = m.kernels.front();
  const target::Target& t = target::builtin_target(c.target);
  test::Prepared p(k, t, 1);
  SpaceOptions so;
  so.max_block = 2;
  CandidateSpace space(p.pk.space_variants(), t, c.dims, so);
  ASSERT_GT(space.size(), 0);
  auto inputs = sweep::check_inputs(k, c.dims, 11);
  auto ref = ir::evaluate(k, c.dims, inputs, ir::Precision::F64);
  int programs = 0, deepened = 0, executed = 0;
  for (std::int64_t i = 0; i < space.size(); i += std::max<std::int64_t>(1, space.size() / 100)) {
    Lowered<Program> program = space.materialize(i);
    if (!program) continue;
    ++programs;
    const std::string what = space.describe(i);
    const bool deep =
        what.find(" bufs=1") == std::string::npos && what.find(" bufs=2") == std::string::npos;
    ASSERT_LE(on_chip_use(*program, t.psum.bank_bytes).psum_banks, t.psum.banks) << what;
    const int groups = static_cast<int>(space.decode(i).tiling.size());
    for (const Buffer& b : program->buffers) {
      if (!b.fills_psum) continue;
      if (!deep) {  // the candidate's depth (or what a pipelined stage needs)
        int depth = what.find(" bufs=1") == std::string::npos ? 2 : 1;
        EXPECT_LE(b.bufs, std::max(depth, b.min_bufs)) << b.name << ": " << what;
        continue;
      }
      EXPECT_GE(b.bufs, 2) << what;
      // Another copy of it would not fit beside its nest's other buffers.
      if (b.bufs < t.psum.banks)
        EXPECT_GT(nest_use(*program, t.psum.bank_bytes, b.nest, groups).psum_banks + banks_of(b, t),
                  t.psum.banks)
            << b.name << " x" << b.bufs << ": " << what;
      deepened += b.bufs > 3;
    }
    // A DMA-transposed tile is read where it was loaded: no copy of it on a compute engine.
    for (const Inst& in : program->insts) {
      if (in.dma || in.in.empty()) continue;
      const std::string& op = in.spec->op.name;
      if (op != "tensor_copy" && op != "activation") continue;
      for (const Inst& w : program->insts)
        if (w.out == in.in[0] && w.spec->op.name == "dma_transpose")
          ADD_FAILURE() << op << " copies the DMA-transposed " << program->buffers[in.in[0]].name
                        << ": " << what;
    }
    if (executed < 3 && (executed < 1 || deepened > 0)) {
      ASSERT_TRUE(test::matches(sim::execute(*program, inputs), ref)) << what;
      ++executed;
    }
  }
  EXPECT_GT(programs, 0);
  EXPECT_EQ(deepened > 0, c.deepened) << deepened << " deepened accumulators";
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, PsumDepth,
    ::testing::Values(
        DepthCase{"bmm_softmax", "trn2", {{"B", 1}, {"M", 256}, {"K", 64}, {"N", 1024}}, true},
        DepthCase{"bmm_softmax", "trn1", {{"B", 1}, {"M", 256}, {"K", 64}, {"N", 1024}}, true},
        DepthCase{"rmsnorm_matmul", "trn2", {{"M", 256}, {"K", 256}, {"N", 1024}}, true},
        DepthCase{"matmul", "trn1", {{"M", 256}, {"K", 256}, {"N", 512}}, true}),
    [](const auto& info) { return info.param.kernel + "_" + info.param.target; });

}  // namespace
}  // namespace ts::lower

#include "tilesweep/sim/capacity.h"

#include <gtest/gtest.h>

#include "program_builder.h"
#include "tilesweep/sim/simulate.h"

namespace ts::sim {
namespace {

using test::ProgramBuilder;

struct CapacityCase {
  const char* name;
  std::vector<std::int64_t> shape;
  sem::Memory memory;
  int bufs;
  const char* reason;  // "" when it fits
};

TEST(Capacity, ReasonsNameWhatDoesNotFit) {
  const target::Target& t = target::builtin_target("trn2");
  const CapacityCase cases[] = {
      {"fits", {128, 2048}, sem::Memory::Sbuf, 4, ""},
      {"sbuf",
       {128, 66560},
       sem::Memory::Sbuf,
       2,
       "SBUF needs 260 KiB per partition, 208 KiB usable"},
      {"sbuf at the edge",
       {128, 53248},
       sem::Memory::Sbuf,
       1,
       "SBUF needs 212992 bytes per partition, 212984 usable"},
      // A PSUM buffer wider than a bank takes whole banks (accumulators of a row block side by
      // side).
      {"psum two banks", {128, 1024}, sem::Memory::Psum, 1, ""},
      {"psum wide", {128, 1024}, sem::Memory::Psum, 5, "PSUM needs 10 banks, 8 available"},
      {"psum banks", {128, 512}, sem::Memory::Psum, 9, "PSUM needs 9 banks, 8 available"},
      {"psum fits", {128, 512}, sem::Memory::Psum, 8, ""},
      {"partitions",
       {256, 4},
       sem::Memory::Sbuf,
       1,
       "buffer 'acc' spans 256 partitions, SBUF has 128"},
  };
  for (const auto& c : cases) {
    ProgramBuilder b(t);
    int buf = c.memory == sem::Memory::Psum
                  ? b.psum("acc", c.shape, c.bufs)
                  : b.sbuf("acc", c.shape[1] == 53248 ? ir::DType::F32 : ir::DType::BF16, c.shape,
                           c.bufs);
    b.op(0, "memset", sem::Engine::Vector, {}, buf, {{"value", 0}, {"P", 1}, {"F", 1}});
    Capacity cap = check_capacity(b.p, t);
    EXPECT_EQ(cap.reason, c.reason) << c.name;
    SimResult r = simulate(b.p, t);
    EXPECT_EQ(r.feasible, std::string(c.reason).empty()) << c.name;
    EXPECT_EQ(r.reason, c.reason) << c.name;
  }
}

TEST(Capacity, CountsEveryCopy) {
  const target::Target& t = target::builtin_target("trn2");
  ProgramBuilder b(t);
  b.sbuf("a", ir::DType::F32, {128, 512}, 3);   // 2 KiB x 3
  b.sbuf("c", ir::DType::BF16, {64, 100}, 1);   // 200 B
  b.psum("p", {128, 256}, 2);                   // 1 KiB x 2, one bank each
  b.hbm("x", ir::DType::F32, {1 << 20, 1024});  // HBM takes no on-chip space
  Capacity cap = check_capacity(b.p, t);
  EXPECT_TRUE(cap.feasible());
  EXPECT_EQ(cap.sbuf_bytes, 3 * 2048 + 200);
  EXPECT_EQ(cap.psum_bytes, 2 * 1024);
  EXPECT_EQ(cap.psum_banks, 2);
}

}  // namespace
}  // namespace ts::sim

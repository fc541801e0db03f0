// Loops with skipped iterations (lower::Block::guard, a triangular nest): the functional
// interpreter, the timing simulator and Program::executions all skip the iterations the guard
// fails, and the program printer shows the guard.
#include <gtest/gtest.h>

#include "program_builder.h"
#include "tilesweep/lower/program_printer.h"
#include "tilesweep/sim/execute.h"
#include "tilesweep/sim/simulate.h"

namespace ts::sim {
namespace {

using test::ProgramBuilder;

const target::Target& trn2() { return target::builtin_target("trn2"); }

struct Triangle {
  lower::Program p;
  int load = -1, store = -1;
};

// for i in range(4): for j in range(4) if i - j + offset >= 0: copy row tile j of x to out.
Triangle triangle(std::optional<std::int64_t> offset) {
  ProgramBuilder b(trn2());
  int x = b.hbm("x", ir::DType::F32, {8, 4});
  int out = b.hbm("out", ir::DType::F32, {8, 4});
  b.p.buffers[x].param = 0;
  b.p.buffers[out].output = 0;
  int t = b.sbuf("t", ir::DType::F32, {2, 4});
  int i = b.loop(0, 4, "i");
  int j = b.loop(i, 4, "j");
  if (offset) b.p.blocks[j].guard = lower::Guard{{{i, 1}, {j, -1}}, *offset};
  Triangle tr;
  tr.load = b.load(j, t, x, j);
  tr.store = b.store(j, t, out, j);
  tr.p = b.p;
  return tr;
}

ir::Tensor input() {
  ir::Tensor x({8, 4});
  for (std::size_t k = 0; k < x.data.size(); ++k) x.data[k] = static_cast<double>(k + 1);
  return x;
}

struct Case {
  std::optional<std::int64_t> offset;
  std::int64_t runs;  // executions of each instruction
  int rows_written;   // row tiles of `out` copied (the rest stay 0)
};

TEST(Guard, SkippedIterationsRunNothing) {
  const Case cases[] = {
      {std::nullopt, 16, 4},  // no guard: every (i, j)
      {0, 10, 4},             // j <= i: the lower triangle
      {-2, 3, 2},             // j <= i - 2: (2, 0), (3, 0), (3, 1)
      {-4, 0, 0},             // nothing runs
  };
  for (const Case& c : cases) {
    Triangle tr = triangle(c.offset);
    auto runs = tr.p.executions();
    EXPECT_EQ(runs[tr.load], c.runs);
    EXPECT_EQ(runs[tr.store], c.runs);
    std::vector<ir::Tensor> out = execute(tr.p, {input()});
    ASSERT_EQ(out.size(), 1u);
    for (std::size_t k = 0; k < out[0].data.size(); ++k) {
      bool written = static_cast<int>(k / 8) < c.rows_written;  // 2 rows of 4 per tile
      EXPECT_EQ(out[0].data[k], written ? static_cast<double>(k + 1) : 0.0) << k;
    }
    for (bool extrapolate : {false, true}) {
      SimResult r = simulate(tr.p, trn2(), SimOptions{extrapolate, 0, false});
      EXPECT_EQ(r.instructions, 2 * c.runs) << extrapolate;
    }
  }
}

TEST(Guard, Printed) {
  std::string text = lower::print_program(triangle(0).p);
  EXPECT_NE(text.find("for j in range(4) if i + j*-1 >= 0:"), std::string::npos) << text;
}

TEST(Guard, ValidateRejectsAGuardOnAnInnerLoop) {
  Triangle tr = triangle(0);
  // Block 1 (i) guarded by block 2 (j), a loop inside it: not readable there.
  tr.p.blocks[1].guard = lower::Guard{{{2, 1}}, 0};
  EXPECT_THROW(lower::validate(tr.p), InternalError);
}

}  // namespace
}  // namespace ts::sim

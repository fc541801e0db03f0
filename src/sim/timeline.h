// Executes instructions of a candidate program on a CoreState, one at a time in program order:
// each starts when its engine is free and its data dependencies allow (see simulate.h for the
// model), and updates the state. Internal to ts_sim.
#pragma once

#include <array>
#include <vector>

#include "core_state.h"
#include "inst_timing.h"
#include "tilesweep/sim/simulate.h"

namespace ts::sim {

class Timeline {
 public:
  // `p` and `t` must outlive the Timeline.
  Timeline(const lower::Program& p, const target::Target& t, std::vector<InstTiming> timing,
           std::vector<TraceEvent>* trace);

  // Runs instruction `inst` at the loop iterations `iter` (indexed by block id).
  void execute(int inst, const std::vector<std::int64_t>& iter);

  // Nothing runs before every instruction so far has ended plus `ns` (a barrier with the other
  // cores, which run their shares in step with this one).
  void barrier(double ns);

  CoreState& state() { return s_; }
  const CoreState& state() const { return s_; }

 private:
  // The columns an instruction writes: a window of its output tile, or (begin == end) all of it.
  struct Columns {
    std::int64_t begin = 0, end = 0;
    bool whole() const { return end <= begin; }
  };
  static Columns columns(const lower::Inst& in, const std::vector<std::int64_t>& iter);
  // `floor`: the earliest start besides engine and data (a fused carrier waits for its rider's
  // output); a rider (lower::Inst::rides) reads its operand 0 inside the fused instruction.
  void run_compute(int inst, bool continues, Columns cols, double floor = kNever,
                   bool rider = false);
  // When `in` may write its output on engine e: WAW / WAR on the version it writes.
  double write_wait(const lower::Inst& in, int e, bool continues, Columns cols) const;
  void run_dma(int inst);
  // Whether writing columns `c` of buffer b joins its current version (written in pieces, none
  // overlapping c), and when such a piece may start on engine e (WAR on the replaced version).
  bool joins(int b, Columns c) const;
  double join_ready(int b, int e) const;
  static void cover(Slot& slot, Columns c);
  // Cost of a dependency from engine `from` (-1: none) to engine `to`, from a table: it is asked
  // for every operand of every simulated instruction.
  double link(int from, int to) const { return links_[from + 1][to]; }
  // Earliest start on engine e allowed by reading / writing buffer b; a read `lag` versions
  // before the latest (Inst::in_lag) waits on that version's writer.
  double read_ready(int b, int e, int lag = 0) const;
  double write_ready(int b, int e, bool continues) const;
  double war_ready(int b,
                   int e) const;  // WAR alone: the reads of the slot the next version overwrites
  // An in-place update of b's current version: after its write (WAW) and every read of it (WAR).
  double read_war_ready(int b, int e) const;
  void mark_read(int b, int e, double end, int lag = 0);
  void mark_write(int b, int e, double end, double ready, bool continues, Columns c);
  void set(Field& f, double t) { f = Field{t, ++s_.seq}; }
  void finish(int inst, int engine, double start, double end);

  const lower::Program& p_;
  const target::Target& t_;
  std::vector<InstTiming> timing_;
  std::vector<int> rider_;  // per instruction: the instruction riding on it, or -1
  std::vector<TraceEvent>* trace_;
  CoreState s_;
  std::array<std::array<double, kEngines>, kEngines + 1> links_{};
};

}  // namespace ts::sim

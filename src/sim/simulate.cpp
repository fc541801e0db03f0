#include "tilesweep/sim/simulate.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "inst_timing.h"
#include "static_bound.h"
#include "steady_state.h"
#include "tilesweep/sim/capacity.h"
#include "tilesweep/sim/cores.h"
#include "timeline.h"

namespace ts::sim {

namespace {

// Steady states repeating every 1 to kMaxPeriod iterations are recognised (multi-buffering and
// DMA engine rotation give periods above 1).
constexpr std::int64_t kMaxPeriod = 8;
// Times more than this many periods back count as equally old when comparing snapshots
// (nothing the loop does next waits for them) — except against the first iteration's
// snapshot, where a start-up transient may still be that far back: all of it must match.
constexpr double kHorizon = 4;
constexpr double kFirstHorizon = std::numeric_limits<double>::infinity();
// A loop is watched for a steady state when it runs at least this many instructions in all.
constexpr double kWatchWork = 64;

// Thrown by the walker when the program runs past SimOptions::max_simulated.
struct OverBudget {};
// Thrown by the walker once the latency is known to exceed SimOptions::stop_after_ns; `ns` is
// what is known of it (a lower bound).
struct Stopped {
  double ns = 0;
};
// Lower bounds are shaved by this fraction so that rounding in their sums never puts them above
// the latency they bound.
constexpr double kShave = 1e-9;
constexpr const char* kStoppedReason = "stopped: its latency exceeds SimOptions::stop_after_ns";

// Walks the loop nest in program order, extrapolating loops that reach a steady state.
class Walker {
 public:
  // `bound`: the program's timeline-free bound, when o.stop_after_ns is finite.
  Walker(const lower::Program& p, const target::Target& t, Timeline& tl, const SimOptions& o,
         const LatencyBound* bound)
      : p_(p),
        bound_(bound),
        t_(t),
        tl_(tl),
        o_(o),
        iter_(p.blocks.size(), 0),
        rings_(p.blocks.size()),
        loops_(p.blocks.size()) {
    if (o.extrapolate) summarize(0);
  }

  void run_block(int b) {
    const std::int64_t trips = trips_of(b);
    const std::uint64_t seq0 = tl_.state().seq;
    // Watch a loop only when skipping its tail can pay for the snapshots.
    // A loop whose iterations a guard tells apart (a triangular nest's) has no steady state.
    bool watch =
        o_.extrapolate && !loops_[b].guarded && trips >= 4 && trips * loops_[b].work >= kWatchWork;
    const std::optional<lower::Guard>& guard = p_.blocks[b].guard;
    std::vector<Snapshot>& ring = rings_[b];  // a block is never active twice at once
    if (watch && ring.empty()) ring.resize(kMaxPeriod + 1);
    for (std::int64_t k = 0; k < trips; ++k) {
      iter_[b] = k;
      if (guard && !guard->holds(iter_)) continue;  // a skipped iteration costs nothing
      run_items(b);
      // Snapshots from iteration 0 on: the step compared is always a later iteration (an
      // accumulation group's start lies in iteration 0, before the first snapshot); only the state
      // after iteration 0 may still carry a start-up transient, hence the strict comparison there.
      if (!watch || k + 1 >= trips) continue;
      Snapshot& cur = ring[k % ring.size()];
      take_snapshot(tl_.state(), loops_[b].footprint, seq0, cur);
      for (std::int64_t period = 1; period <= kMaxPeriod && k - period >= 0; ++period) {
        const Snapshot& before = ring[(k - period) % ring.size()];
        if (!periodic(before, cur, k - period == 0 ? kFirstHorizon : kHorizon)) continue;
        std::int64_t repeats = (trips - 1 - k) / period;
        extrapolate(tl_.state(), loops_[b].footprint, before, cur, repeats, seq0);
        k += repeats * period;
        watch = false;  // simulate what is left (less than one period) as it comes
        break;
      }
    }
    iter_[b] = 0;
  }

 private:
  struct Loop {
    Footprint footprint;
    double work = 0;       // instructions one iteration runs, nested loops included
    bool guarded = false;  // a guard inside (or on) the loop reads its variable
  };

  // Fills loops_[b] and those of the blocks inside it.
  void summarize(int b) {
    std::vector<int> buffers, tensors;
    mark_guard_reads(b);
    for (const lower::Item& item : p_.blocks[b].items) {
      if (item.block >= 0) {
        summarize(item.block);
        const Loop& inner = loops_[item.block];
        buffers.insert(buffers.end(), inner.footprint.buffers.begin(),
                       inner.footprint.buffers.end());
        tensors.insert(tensors.end(), inner.footprint.tensors.begin(),
                       inner.footprint.tensors.end());
        loops_[b].work += static_cast<double>(trips_of(item.block)) * inner.work;
        continue;
      }
      const lower::Inst& in = p_.insts[item.inst];
      buffers.insert(buffers.end(), in.in.begin(), in.in.end());
      if (in.out >= 0) buffers.push_back(in.out);
      if (in.dma && in.store) tensors.push_back(in.hbm.buffer);
      loops_[b].work += 1;
    }
    loops_[b].footprint.buffers = sorted_unique(std::move(buffers));
    loops_[b].footprint.tensors = sorted_unique(std::move(tensors));
  }

  // Marks the loops that block b's guard reads.
  void mark_guard_reads(int b) {
    if (!p_.blocks[b].guard) return;
    for (const auto& [g, step] : p_.blocks[b].guard->terms)
      if (step != 0) loops_[g].guarded = true;
  }

  static std::vector<int> sorted_unique(std::vector<int> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  }

  void run_items(int b) {
    const auto& items = p_.blocks[b].items;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const lower::Item& item = items[i];
      if (item.inst >= 0)
        tl_.execute(item.inst, iter_);
      else
        run_block(item.block);
      // A top-level loop split over the cores ends in a barrier when more work follows: what
      // comes next may read what any core wrote.
      if (b == 0 && item.block >= 0 && p_.cores > 1 && i + 1 < items.size())
        tl_.barrier(core_barrier_ns(t_, p_.cores));
      if (tl_.state().totals.simulated > static_cast<double>(o_.max_simulated)) throw OverBudget{};
      if (bound_) check_stop();
    }
  }

  // Stops once the latency provably exceeds o_.stop_after_ns: an instruction has ended later, or
  // a compute engine, in order, still has more work than fits before it (its free time plus its
  // busy time in the bound not yet run; the bound counts no guarded iteration, so what it leaves
  // is at most what is left).
  void check_stop() const {
    const CoreState& s = tl_.state();
    if (s.max_end.t > o_.stop_after_ns) throw Stopped{s.max_end.t};
    for (std::size_t e = 0; e < s.engine_free.size(); ++e) {
      double left = (s.engine_free[e].t + (bound_->engine[e] - s.totals.busy[e])) * (1 - kShave);
      if (left > o_.stop_after_ns) throw Stopped{left};
    }
  }

  // One core's share: the loops directly in the top block are split across the cores.
  std::int64_t trips_of(int b) const {
    const lower::Block& blk = p_.blocks[b];
    if (blk.parent != 0 || p_.cores <= 1) return blk.trips;
    return (blk.trips + p_.cores - 1) / p_.cores;
  }

  const lower::Program& p_;
  const LatencyBound* bound_;
  const target::Target& t_;
  Timeline& tl_;
  const SimOptions& o_;
  std::vector<std::int64_t> iter_;
  std::vector<std::vector<Snapshot>> rings_;  // per block: the last snapshots, reused
  std::vector<Loop> loops_;                   // per block
};

}  // namespace

SimResult simulate(const lower::Program& p, const target::Target& t, const SimOptions& o) {
  lower::validate(p);
  SimResult r;
  Capacity cap = check_capacity(p, t);
  r.sbuf_peak_bytes = cap.sbuf_bytes;
  r.psum_peak_bytes = cap.psum_bytes;
  if (!cap.feasible()) {
    r.feasible = false;
    r.reason = cap.reason;
    return r;
  }
  double hbm_bytes_per_ns = (o.hbm_cores > 0 ? t.chip.hbm_bytes_per_s / o.hbm_cores
                                             : hbm_bytes_per_s_per_core(t, p.cores)) /
                            1e9;
  std::vector<InstTiming> timing = inst_timings(p, t, hbm_bytes_per_ns);
  std::optional<LatencyBound> bound;
  if (o.stop_after_ns < std::numeric_limits<double>::infinity()) {
    // The timeline-free bound first: a candidate it already rules out costs no timeline.
    bound = latency_lower_bound(p, t, timing);
    if (bound->ns * (1 - kShave) > o.stop_after_ns) {
      r.feasible = false;
      r.stopped = true;
      r.reason = kStoppedReason;
      r.latency_ns = bound->ns * (1 - kShave);
      return r;
    }
  }
  Timeline tl(p, t, std::move(timing), o.trace ? &r.trace : nullptr);
  try {
    Walker(p, t, tl, o, bound ? &*bound : nullptr).run_block(0);
  } catch (const OverBudget&) {
    r.feasible = false;
    r.reason = fmt::format(
        "not simulated: over the simulator's budget of {} instruction executions (its loops reach "
        "no steady state early enough); smaller dims simulate",
        o.max_simulated);
    return r;
  } catch (const Stopped& stop) {
    r.feasible = false;
    r.stopped = true;
    r.reason = kStoppedReason;
    r.latency_ns = stop.ns;
    return r;
  }
  const CoreState& s = tl.state();
  r.latency_ns = std::max(0.0, s.max_end.t);
  r.busy_ns = s.totals.busy;
  r.hbm_read_bytes = s.totals.read_bytes;
  r.hbm_write_bytes = s.totals.write_bytes;
  r.spill_bytes = p.spill_bytes() / std::max(1, p.cores);
  r.instructions = s.totals.instructions;
  r.simulated = static_cast<std::int64_t>(s.totals.simulated);
  return r;
}

}  // namespace ts::sim

#include "tilesweep/sweep/score.h"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>

#include "tilesweep/lower/fusion.h"
#include "tilesweep/sim/capacity.h"
#include "tilesweep/sweep/interrupt.h"

namespace ts::sweep {

bool better(const CandidateScore& a, const CandidateScore& b) {
  if (a.latency() != b.latency()) return a.latency() < b.latency();
  return a.index < b.index;
}

CandidateScore score_program(const lower::Program& p, const target::Target& t,
                             double stop_after_ns) {
  CandidateScore s;
  sim::Capacity cap = sim::check_capacity(p, t);
  if (!cap.feasible()) {
    s.reason = cap.reason;
    return s;
  }
  sim::SimOptions o;
  o.stop_after_ns = stop_after_ns;
  s.sim = sim::simulate(p, t, o);
  s.feasible = s.sim.feasible;
  s.reason = s.sim.reason;
  return s;
}

CandidateScore score_candidate(const lower::CandidateSpace& space, std::int64_t index,
                               const target::Target& t) {
  lower::CandidateCursor cursor(space);
  return score_candidate(cursor, index, t);
}

CandidateScore score_candidate(lower::CandidateCursor& cursor, std::int64_t index,
                               const target::Target& t) {
  const lower::Lowered<lower::Program>& program = cursor.at(index);
  CandidateScore s;
  if (program)
    s = score_program(*program, t);
  else
    s.reason = program.no_program().reason;
  s.index = index;
  return s;
}

namespace {

void keep_best(std::vector<CandidateScore>& top, std::size_t keep) {
  std::sort(top.begin(), top.end(), better);
  if (top.size() > keep) top.resize(keep);
}

}  // namespace

void merge(RangeResult& a, const RangeResult& b, std::size_t keep) {
  a.top.insert(a.top.end(), b.top.begin(), b.top.end());
  keep_best(a.top, keep);
  a.scored += b.scored;
  a.infeasible += b.infeasible;
  a.pruned += b.pruned;
  a.no_algebra_ns = std::min(a.no_algebra_ns, b.no_algebra_ns);
  a.no_fusion_ns = std::min(a.no_fusion_ns, b.no_fusion_ns);
}

RangeResult score_range(const lower::CandidateSpace& space, std::int64_t first, std::int64_t last,
                        const target::Target& t, std::size_t keep) {
  return score_range(space, SpaceSample(space.sections(), 0, 0), first, last, t, keep);
}

RangeResult score_range(const lower::CandidateSpace& space, const SpaceSample& sample,
                        std::int64_t first, std::int64_t last, const target::Target& t,
                        std::size_t keep, const std::atomic<int>* stop, const Pruner* pruner) {
  auto sections = space.sections();
  auto section_of = [&](std::int64_t i) {
    auto it = std::upper_bound(
        sections.begin(), sections.end(), i,
        [](std::int64_t x, const lower::CandidateSpace::Section& s) { return x < s.first; });
    return *(it - 1);
  };
  // A candidate the pruner stops is scored again in full when its partial latency does not
  // prove it prunable (a mesh latency that ties): sim.stopped then means pruned.
  auto score = [&](lower::CandidateCursor& cursor, std::int64_t i,
                   const lower::CandidateSpace::Section& sec) {
    const lower::Lowered<lower::Program>& program = cursor.at(i);
    CandidateScore s;
    s.index = i;
    if (!program) {
      s.reason = program.no_program().reason;
      return s;
    }
    if (pruner) {
      s = score_program(*program, t, pruner->stop_after(sec));
      s.index = i;
      if (!s.sim.stopped || pruner->prunes(s.sim.latency_ns, sec)) return s;
    }
    s = score_program(*program, t);
    s.index = i;
    return s;
  };
  tbb::enumerable_thread_specific<RangeResult> local;
  std::atomic<bool> skipped{false};
  tbb::enumerable_thread_specific<lower::CandidateCursor> cursors(
      [&] { return lower::CandidateCursor(space); });
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(first, last, 16),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      RangeResult& mine = local.local();
                      lower::CandidateCursor& cursor = cursors.local();
                      for (std::int64_t pos = r.begin(); pos != r.end(); ++pos) {
                        if (stop && stop->load(std::memory_order_relaxed) != 0) {
                          skipped = true;
                          return;
                        }
                        const std::int64_t i = sample.index(pos);
                        auto sec = section_of(i);
                        ++mine.scored;
                        CandidateScore s = score(cursor, i, sec);
                        if (s.sim.stopped) {
                          ++mine.pruned;
                          continue;
                        }
                        if (!s.feasible) {
                          ++mine.infeasible;
                          continue;
                        }
                        if (sec.variant == 0)
                          mine.no_algebra_ns = std::min(mine.no_algebra_ns, s.sim.latency_ns);
                        if (!sec.fused)
                          mine.no_fusion_ns = std::min(mine.no_fusion_ns, s.sim.latency_ns);
                        mine.top.push_back(std::move(s));
                        if (mine.top.size() > 4 * keep + 64) keep_best(mine.top, keep);
                      }
                    });
  if (skipped) throw UnitInterrupted();
  RangeResult out;
  for (auto& l : local) merge(out, l, keep);
  return out;
}

}  // namespace ts::sweep

// Sound pruning of a sweep's candidates. Before a space is scored, a few of its candidates (the
// seeds: evenly spread over the scored positions, plus each section's first, then the neighbours
// of the best of them in position and, in a descent, in choices) are simulated;
// their latencies bound what the rows the sweep keeps can be:
//  - keep_ns: the keep-th best seed latency. The space's best `keep` candidates are no slower,
//    so a candidate slower than it is not among the kept rows (/candidates, /best).
//  - variant0_ns, unfused_ns: the best seed of the original variant / of the unfused forms. The
//    no-algebra / no-fusion baselines (min over those candidates) are no slower.
// A candidate is pruned only when its latency provably exceeds the threshold of every class it
// belongs to (all; variant 0 when it is; unfused when it is), compared on the mesh (the mesh
// latency of a space with collectives, strictly greater): it can change neither the kept rows
// nor a baseline nor a tie (ties go to the lower index, and a pruned candidate is strictly
// slower). Its latency is bounded by the simulator's own stop (SimOptions::stop_after_ns: the
// timeline-free bound of sim/lower_bound.h first, then the timeline's end so far).
//
// Deterministic: the seeds and thresholds depend only on the space, its sample and the job, so
// every rank, thread count and resumed run prunes the same candidates. The thresholds are
// latencies of scored candidates (seeds are scored positions), never estimates.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/sweep/sample.h"
#include "tilesweep/target/target.h"

namespace ts::sweep {

struct PruneBounds {
  static constexpr double kNone = std::numeric_limits<double>::infinity();
  double keep_ns = kNone;      // the keep-th best seed (simulated local latency)
  double variant0_ns = kNone;  // best seed of variant 0 (kNone: none, or no ablations)
  double unfused_ns = kNone;   // best seed of an unfused section (likewise)
  std::int64_t seeds = 0;      // seeds simulated
};

struct PruneOptions {
  std::int64_t keep = 16;    // rows kept per space (kKeepAll, 0: all, nothing is pruned)
  bool ablations = true;     // keep the no-algebra / no-fusion baselines exact
  std::int64_t seeds = 128;  // seeds spread over the positions (each section's first besides)
  // Then the neighbourhood (`around` positions on each side) of each of the best `refine` seeds:
  // neighbours share a tiling, so good seeds lead to better ones and tighter thresholds.
  std::int64_t refine = 8, around = 16;
  // Then a descent: rounds of the neighbours (CandidateSpace::neighbours: one choice changed) of
  // the best `keep` seeds and the ablation classes' best, each stopped past the bounds so far;
  // until a round finds no new leader, `descent_rounds` rounds or `descent` more seeds. Good
  // candidates have good neighbours, so the thresholds close in on the kept rows' latencies.
  int descent_rounds = 8;
  std::int64_t descent = 8192;
};

// Simulates the seeds of `sample` (all cores, TBB) and returns the thresholds.
PruneBounds prune_bounds(const lower::CandidateSpace& space, const SpaceSample& sample,
                         const target::Target& t, const PruneOptions& o);

// The bounds of space `space` as one text line, exact (hexadecimal floats), for the ranks to
// share: each simulates the seeds of its share of the spaces (Plan).
std::string bounds_line(std::int64_t space, const PruneBounds& b);
// Sets out[space] from every line of `text`; throws InternalError on a malformed line or a space
// out of range.
void read_bounds_lines(const std::string& text, std::vector<PruneBounds>& out);

// Decides per candidate from a space's bounds. `mesh_latency` maps a simulated local latency to
// the latency the rows compare (monotone non-decreasing; empty: the same).
class Pruner {
 public:
  Pruner() = default;  // prunes nothing
  Pruner(PruneBounds b, std::function<double(double)> mesh_latency);

  // The simulated latency past which a candidate of section `s` may be pruned (infinity: none).
  double stop_after(const lower::CandidateSpace::Section& s) const;
  // Whether a candidate of section `s` whose latency is at least `lower_ns` can be skipped.
  bool prunes(double lower_ns, const lower::CandidateSpace::Section& s) const;
  const PruneBounds& bounds() const { return b_; }

 private:
  double mesh(double ns) const { return mesh_ ? mesh_(ns) : ns; }
  PruneBounds b_;
  std::function<double(double)> mesh_;
};

}  // namespace ts::sweep

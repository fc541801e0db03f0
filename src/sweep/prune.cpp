#include "tilesweep/sweep/prune.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>
#include <vector>

#include "tilesweep/base/error.h"
#include "tilesweep/sweep/score.h"

namespace ts::sweep {

namespace {

// The seed positions: `n` evenly spread over the sample, and each part's first; sorted.
std::vector<std::int64_t> seed_positions(const SpaceSample& sample, std::int64_t n) {
  std::set<std::int64_t> out;
  const std::int64_t size = sample.size();
  if (size == 0) return {};
  n = std::min(n, size);
  for (std::int64_t k = 0; k < n; ++k) out.insert(k * size / n);
  for (const auto& part : sample.parts())
    if (part.count > 0) out.insert(part.first);
  return {out.begin(), out.end()};
}

}  // namespace

PruneBounds prune_bounds(const lower::CandidateSpace& space, const SpaceSample& sample,
                         const target::Target& t, const PruneOptions& o) {
  PruneBounds b;
  if (o.keep <= 0) return b;  // every candidate is kept: nothing can be pruned
  std::vector<std::int64_t> positions = seed_positions(sample, o.seeds);
  std::vector<CandidateScore> scores(positions.size());
  auto score_from = [&](std::size_t from) {
    tbb::parallel_for(from, positions.size(), [&](std::size_t k) {
      scores[k] = score_candidate(space, sample.index(positions[k]), t);
      scores[k].index = positions[k];  // the position, for the refinement; decoded below
    });
  };
  score_from(0);
  // The best `refine` seeds' neighbourhoods (new positions only, in increasing order).
  std::vector<CandidateScore> best = scores;
  std::sort(best.begin(), best.end(), better);
  std::set<std::int64_t> more, have(positions.begin(), positions.end());
  for (std::size_t k = 0; k < best.size() && k < static_cast<std::size_t>(o.refine); ++k) {
    if (!best[k].feasible) break;
    for (std::int64_t p = std::max<std::int64_t>(0, best[k].index - o.around);
         p < std::min(sample.size(), best[k].index + o.around + 1); ++p)
      if (!have.count(p)) more.insert(p);
  }
  const std::size_t first_more = positions.size();
  positions.insert(positions.end(), more.begin(), more.end());
  scores.resize(positions.size());
  score_from(first_more);
  for (CandidateScore& s : scores) s.index = sample.index(s.index);
  b.seeds = static_cast<std::int64_t>(scores.size());
  std::vector<double> feasible;
  for (const CandidateScore& s : scores) {
    if (!s.feasible) continue;
    feasible.push_back(s.sim.latency_ns);
    if (!o.ablations) continue;
    const lower::Candidate c = space.decode(s.index);
    if (c.variant == 0) b.variant0_ns = std::min(b.variant0_ns, s.sim.latency_ns);
    if (!c.fused) b.unfused_ns = std::min(b.unfused_ns, s.sim.latency_ns);
  }
  if (static_cast<std::int64_t>(feasible.size()) >= o.keep) {
    std::nth_element(feasible.begin(), feasible.begin() + (o.keep - 1), feasible.end());
    b.keep_ns = feasible[static_cast<std::size_t>(o.keep - 1)];
  }
  return b;
}

std::string bounds_line(std::int64_t space, const PruneBounds& b) {
  return fmt::format("{} {:a} {:a} {:a} {}\n", space, b.keep_ns, b.variant0_ns, b.unfused_ns,
                     b.seeds);
}

void read_bounds_lines(const std::string& text, std::vector<PruneBounds>& out) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::int64_t space = -1;
    std::string keep, variant0, unfused;
    PruneBounds b;
    if (!(fields >> space >> keep >> variant0 >> unfused >> b.seeds) || space < 0 ||
        space >= static_cast<std::int64_t>(out.size()))
      throw InternalError(fmt::format("malformed pruning bounds line '{}'", line));
    b.keep_ns = std::strtod(keep.c_str(), nullptr);
    b.variant0_ns = std::strtod(variant0.c_str(), nullptr);
    b.unfused_ns = std::strtod(unfused.c_str(), nullptr);
    out[static_cast<std::size_t>(space)] = b;
  }
}

Pruner::Pruner(PruneBounds b, std::function<double(double)> mesh_latency)
    : b_(b), mesh_(std::move(mesh_latency)) {}

double Pruner::stop_after(const lower::CandidateSpace::Section& s) const {
  double t = b_.keep_ns;
  if (s.variant == 0) t = std::max(t, b_.variant0_ns);
  if (!s.fused) t = std::max(t, b_.unfused_ns);
  return t;
}

bool Pruner::prunes(double lower_ns, const lower::CandidateSpace::Section& s) const {
  const double m = mesh(lower_ns);
  auto beyond = [&](double threshold) {
    return threshold < PruneBounds::kNone && m > mesh(threshold);
  };
  if (!beyond(b_.keep_ns)) return false;
  if (s.variant == 0 && !beyond(b_.variant0_ns)) return false;
  if (!s.fused && !beyond(b_.unfused_ns)) return false;
  return true;
}

}  // namespace ts::sweep

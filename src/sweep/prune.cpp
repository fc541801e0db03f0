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

// The seeds scored so far (`index` holds each one's position) and what they bound.
class Seeds {
 public:
  Seeds(const lower::CandidateSpace& space, const SpaceSample& sample, const target::Target& t,
        const PruneOptions& o)
      : space_(space), sample_(sample), t_(t), o_(o) {}

  bool has(std::int64_t position) const { return have_.count(position) > 0; }
  std::int64_t count() const { return static_cast<std::int64_t>(scores_.size()); }

  // Scores `positions` (new ones, increasing) in parallel; each stopped past the bounds so far
  // (`stop`) or simulated to the end. A stopped seed is provably slower than the threshold of
  // every class it belongs to, so it changes no bound: thresholds only fall.
  void score(const std::vector<std::int64_t>& positions, bool stop) {
    const Pruner pruner(bounds(), {});
    std::vector<CandidateScore> scored(positions.size());
    tbb::parallel_for(std::size_t{0}, positions.size(), [&](std::size_t k) {
      const std::int64_t index = sample_.index(positions[k]);
      lower::CandidateCursor cursor(space_);
      const lower::Lowered<lower::Program>& program = cursor.at(index);
      if (program)
        scored[k] = score_program(
            *program, t_, stop ? pruner.stop_after(section_of(positions[k])) : PruneBounds::kNone);
      else
        scored[k].reason = program.no_program().reason;
      scored[k].index = positions[k];  // the position, for the descent; decoded in bounds()
    });
    for (std::size_t k = 0; k < positions.size(); ++k) {
      have_.insert(positions[k]);
      scores_.push_back(std::move(scored[k]));
    }
  }

  // The feasible seeds, best first.
  std::vector<const CandidateScore*> best() const {
    std::vector<const CandidateScore*> out;
    for (const CandidateScore& s : scores_)
      if (s.feasible) out.push_back(&s);
    std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return better(*a, *b); });
    return out;
  }

  // The positions whose neighbourhoods lead to tighter bounds: the best `keep` seeds, and with
  // ablations the best seed of the original variant and of the unfused forms.
  std::vector<std::int64_t> leaders() const {
    std::vector<std::int64_t> out;
    bool variant0 = !o_.ablations, unfused = !o_.ablations;
    std::int64_t n = 0;
    for (const CandidateScore* s : best()) {
      const auto& sec = section_of(s->index);
      bool lead = n++ < o_.keep;
      if (!variant0 && sec.variant == 0) lead = variant0 = true;
      if (!unfused && !sec.fused) lead = unfused = true;
      if (lead) out.push_back(s->index);
      if (n >= o_.keep && variant0 && unfused) break;
    }
    return out;
  }

  PruneBounds bounds() const {
    PruneBounds b;
    b.seeds = count();
    std::vector<double> feasible;
    for (const CandidateScore* s : best()) {
      feasible.push_back(s->sim.latency_ns);
      if (!o_.ablations) continue;
      const auto& sec = section_of(s->index);
      if (sec.variant == 0) b.variant0_ns = std::min(b.variant0_ns, s->sim.latency_ns);
      if (!sec.fused) b.unfused_ns = std::min(b.unfused_ns, s->sim.latency_ns);
    }
    if (static_cast<std::int64_t>(feasible.size()) >= o_.keep)
      b.keep_ns = feasible[static_cast<std::size_t>(o_.keep - 1)];
    return b;
  }

 private:
  const lower::CandidateSpace::Section& section_of(std::int64_t position) const {
    const auto& parts = sample_.parts();
    auto it = std::upper_bound(
        parts.begin(), parts.end(), position,
        [](std::int64_t p, const SpaceSample::Part& part) { return p < part.first; });
    return (it - 1)->section;
  }

  const lower::CandidateSpace& space_;
  const SpaceSample& sample_;
  const target::Target& t_;
  const PruneOptions& o_;
  std::vector<CandidateScore> scores_;
  std::set<std::int64_t> have_;
};

}  // namespace

PruneBounds prune_bounds(const lower::CandidateSpace& space, const SpaceSample& sample,
                         const target::Target& t, const PruneOptions& o) {
  if (o.keep <= 0) return {};  // every candidate is kept: nothing can be pruned
  Seeds seeds(space, sample, t, o);
  seeds.score(seed_positions(sample, o.seeds), false);
  // The best `refine` seeds' neighbourhoods in position (new positions only, in increasing order).
  std::set<std::int64_t> more;
  std::int64_t refined = 0;
  for (const CandidateScore* s : seeds.best()) {
    if (refined++ >= o.refine) break;
    for (std::int64_t p = std::max<std::int64_t>(0, s->index - o.around);
         p < std::min(sample.size(), s->index + o.around + 1); ++p)
      if (!seeds.has(p)) more.insert(p);
  }
  seeds.score({more.begin(), more.end()}, false);
  // The descent: each round the neighbours (one choice changed) of the leaders not yet expanded,
  // scored positions only, best leader first, up to `descent` seeds in all.
  std::set<std::int64_t> expanded;
  const std::int64_t limit = seeds.count() + std::max<std::int64_t>(o.descent, 0);
  bool full = false;  // a leader's neighbourhood did not fit in the limit: this round is the last
  for (int round = 0; round < o.descent_rounds && !full; ++round) {
    std::set<std::int64_t> next;
    for (std::int64_t leader : seeds.leaders()) {
      if (expanded.count(leader)) continue;
      std::set<std::int64_t> around;
      for (std::int64_t n : space.neighbours(sample.index(leader)))
        if (auto p = sample.position(n); p && !seeds.has(*p) && !next.count(*p)) around.insert(*p);
      full = seeds.count() + static_cast<std::int64_t>(next.size() + around.size()) > limit;
      if (full) break;
      expanded.insert(leader);
      next.insert(around.begin(), around.end());
    }
    if (next.empty()) break;
    seeds.score({next.begin(), next.end()}, true);
  }
  return seeds.bounds();
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

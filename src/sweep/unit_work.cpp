#include "tilesweep/sweep/unit_work.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "tilesweep/sweep/score.h"

namespace ts::sweep {

namespace {

// Lowering digits and the engine choice as one number, radix max_lowerings (stable per job).
std::int64_t choice_id(const lower::Candidate& c, int radix) {
  std::int64_t id = 0;
  for (auto it = c.lowering.rbegin(); it != c.lowering.rend(); ++it)
    id = id * std::max(radix, 1) + *it;
  for (auto it = c.op_engines.rbegin(); it != c.op_engines.rend(); ++it) id = id * 2 + *it;
  return id * 2 + c.engines;
}

}  // namespace

bool is_summary(const store::CandidateRecord& r) {
  return r.index < 0 && r.reason == kSummaryReason;
}

store::CandidateRecord candidate_record(const SpaceEntry& e, const CandidateScore& s) {
  lower::Candidate c = e.space->decode(s.index);
  store::CandidateRecord r;
  r.kernel = e.label;
  r.target = e.target_name;
  r.shape = e.shape_name;
  r.mesh = e.setting.mesh;
  r.sharding = e.setting.sharding;
  r.variant = c.variant;
  r.choice = choice_id(c, 64);  // max_lowerings <= 64
  r.config = e.space->describe(s.index);
  r.feasible = s.feasible;
  r.reason = s.reason;
  r.compute_ns = s.feasible ? s.sim.latency_ns : store::kNotComputed;
  r.latency_ns = s.feasible ? e.latency(s.sim.latency_ns) : store::kNotComputed;
  r.collective_ns = e.setting.collective_ns;
  r.roofline_ns = e.roofline_ns;
  for (int i = 0; i < store::kEngineCount; ++i) r.busy_ns[i] = s.sim.busy_ns[i];
  r.hbm_read_bytes = static_cast<std::int64_t>(s.sim.hbm_read_bytes);
  r.hbm_write_bytes = static_cast<std::int64_t>(s.sim.hbm_write_bytes);
  r.sbuf_peak_bytes = s.sim.sbuf_peak_bytes;
  r.psum_peak_bytes = s.sim.psum_peak_bytes;
  r.spill_bytes = static_cast<std::int64_t>(s.sim.spill_bytes);
  r.index = s.index;
  return r;
}

store::UnitResult score_unit(const SpaceEntry& e, const WorkUnit& u, std::int64_t keep_top,
                             int rank, const std::atomic<int>* stop) {
  auto t0 = std::chrono::steady_clock::now();
  const std::int64_t last = u.first + u.count;
  const auto keep =
      static_cast<std::size_t>(keep_top == kKeepAll ? u.count : std::min(keep_top, u.count));
  RangeResult all;
  std::vector<CandidateScore> section_bests;
  for (const auto& part : e.sample.parts()) {  // per section, in sample positions
    std::int64_t a = std::max(u.first, part.first), b = std::min(last, part.first + part.count);
    if (a >= b) continue;
    RangeResult piece = score_range(*e.space, e.sample, a, b, *e.machine, keep, stop, &e.pruner);
    if (!piece.top.empty()) section_bests.push_back(piece.top.front());
    merge(all, piece, keep);
  }
  std::set<std::int64_t> kept;
  for (const auto& s : all.top) kept.insert(s.index);
  for (auto& s : section_bests)
    if (kept.insert(s.index).second) all.top.push_back(std::move(s));
  std::sort(all.top.begin(), all.top.end(), better);
  store::UnitResult out;
  out.progress = {u.id,           e.label,
                  e.target_name,  e.shape_name,
                  e.setting.mesh, e.setting.sharding,
                  u.first,        u.count,
                  rank,           0,
                  all.scored};
  for (const auto& s : all.top) out.candidates.push_back(candidate_record(e, s));
  for (auto& r : out.candidates) r.rank = rank, r.unit = u.id;
  store::CandidateRecord summary;
  summary.kernel = e.label, summary.target = e.target_name, summary.shape = e.shape_name;
  summary.mesh = e.setting.mesh, summary.sharding = e.setting.sharding;
  summary.index = -1, summary.reason = kSummaryReason, summary.choice = all.infeasible;
  summary.hbm_read_bytes = all.pruned;
  summary.rank = rank, summary.unit = u.id;
  out.candidates.push_back(summary);
  out.progress.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace ts::sweep

// `tilesweep why`: per (kernel, target, shape, mesh) of an archive, what bounds its best
// candidate — every engine's busy time, the collectives, the partitions its groups use of the
// target's, its HBM traffic, on-chip peaks and spilled bytes (its /candidates row) — and, for a
// key without a program, why: the reason each variant and fusion form of the rebuilt candidate
// space has none (lower::NoProgram), or, when every candidate was scored infeasible, the reasons
// recorded. The space is rebuilt as the sweep built it (report/nki_emitter.cpp does the same):
// the job, kernels and target recorded in the archive, prepared again (seconds; the records of
// `<archive>.synthesis` make it quick).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tilesweep/report/select.h"

namespace ts::report {

struct WhyFilter {
  std::string kernel, target, shape, mesh;  // "" = any
};

struct Why {
  std::string kernel, target, shape, mesh;
  std::string bound;  // one phrase: "dma 92% busy; 8 of 128 partitions", "no program"
  std::vector<std::string> details;  // one line each
};

// The best row's /candidates record (same key, sharding and index), or nullptr when not kept.
const store::CandidateRecord* best_candidate(const store::Archive& a, const store::BestRecord& b);

// The row tiles (partitions) of each fused group of a candidate's config ("g0: pt=128 ...").
std::vector<int> group_partitions(const std::string& config);

// The report's `bound` phrase: the busiest engine's share of the latency, the collectives', and
// where the candidate row says so, partitions left idle and spilled bytes. `partitions`: the
// target's (0 = unknown).
std::string bound_phrase(const store::BestRecord& b, const store::CandidateRecord* c,
                         int partitions);

// Throws UserError for a filter that matches no /best row (naming what the archive has).
std::vector<Why> explain(const LoadedArchive& l, const WhyFilter& filter);

}  // namespace ts::report

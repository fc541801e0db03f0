// The deterministic half of a sweep, built identically on every rank from the job alone: each
// (kernel, target) prepared once (proved variants and instruction choices, shape-independent),
// the candidate space of every (kernel, target, shape), and the work units over them.
// Proofs are answered through one VerdictCache shared by all kernels and targets of the rank
// (optionally persisted, so a resumed run does not prove again).
//
// Not copyable or movable: spaces point into the prepared kernels and the synthesis cache.
// Const methods are thread-safe.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/store/schema.h"
#include "tilesweep/sweep/job.h"
#include "tilesweep/sweep/prepare.h"
#include "tilesweep/sweep/units.h"
#include "tilesweep/verify/cache.h"

namespace ts::sweep {

// One (kernel, target, shape) of the job, mesh "1".
struct SpaceEntry {
  int kernel = 0, target = 0, shape = 0;  // indices into the job
  std::string label, target_name, shape_name;
  sem::DimEnv dims;
  const sim::Target* machine = nullptr;
  const PreparedKernel* prepared = nullptr;
  double roofline_ns = 0;  // of the original kernel (variant 0) at these dims on this target
  std::unique_ptr<lower::CandidateSpace> space;
};

class Plan {
 public:
  // Prepares every (kernel, target) of the job and builds every space. `verdict_file`: the
  // proof cache file ("" for none), read if present; save_verdicts() writes it. `shared_verdicts`:
  // another Plan's verdicts_text(), so that what it proved is not proved again here.
  Plan(const Job& job, const std::string& verdict_file = "", const std::string& shared_verdicts = "");
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  const Job& job() const { return job_; }
  const std::vector<SpaceEntry>& spaces() const { return spaces_; }
  const std::vector<WorkUnit>& units() const { return units_; }
  std::int64_t candidates() const;  // over all spaces
  double prepare_seconds() const { return prepare_seconds_; }
  void save_verdicts() const { verdicts_.save(); }
  std::string verdicts_text() const { return verdicts_.text(); }
  std::size_t solver_queries() const { return verdicts_.misses(); }  // proofs not found in the caches

  // Every swap query of every kernel (once per kernel: swaps do not depend on the target) and
  // every synthesized tile op per target, sorted by (kind, kernel, text).
  std::vector<store::ProofRecord> proofs() const;

 private:
  const PreparedKernel& prepare(int kernel, int target);

  const Job& job_;
  verify::VerdictCache verdicts_;
  lower::SynthesisCache synthesis_;
  std::vector<ir::Module> modules_;          // per job kernel
  std::deque<PreparedKernel> prepared_;      // per (kernel, target), never moved
  std::vector<std::pair<int, int>> prepared_keys_;
  std::vector<SpaceEntry> spaces_;
  std::vector<WorkUnit> units_;
  double prepare_seconds_ = 0;
};

}  // namespace ts::sweep

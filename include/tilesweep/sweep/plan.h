// The deterministic half of a sweep, built identically on every rank from the job alone: each
// (kernel, target) prepared once (proved variants and instruction choices, shape-independent),
// the candidate space of every (kernel, target, shape, mesh, sharding) — built at the sharding's
// local shape — and the work units over them. Without a [mesh] table the only mesh is "1"
// (one space per (kernel, target, shape), no sharding). Spaces are in job order: kernel, target,
// shape, the job's meshes in their order, then mesh_settings' sharding order; the spaces of one
// (kernel, target, shape, mesh) — one /best row — are consecutive and share a `key`.
// Proofs are answered through one VerdictCache shared by all kernels and targets of the rank
// (optionally persisted, so a resumed run does not prove again).
//
// Not copyable or movable: spaces point into the prepared kernels and the synthesis cache.
// Const methods are thread-safe.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/mesh/mesh_shape.h"
#include "tilesweep/store/schema.h"
#include "tilesweep/sweep/job.h"
#include "tilesweep/sweep/mesh_setting.h"
#include "tilesweep/sweep/prepare.h"
#include "tilesweep/sweep/prune.h"
#include "tilesweep/sweep/sample.h"
#include "tilesweep/sweep/units.h"
#include "tilesweep/verify/cache.h"

namespace ts::sweep {

// One (kernel, target, shape, mesh, sharding) of the job.
struct SpaceEntry {
  int kernel = 0, target = 0, shape = 0, mesh = 0;  // indices into the job (mesh: Plan::meshes())
  int key = 0;  // index of its (kernel, target, shape, mesh): the /best row it competes for
  std::string label, target_name, shape_name;  // shape_name: the global shape
  sem::DimEnv dims;  // the local dims the space is built at (the shape itself on one device)
  MeshSetting
      setting;  // mesh text, sharding, collectives, roofline of the whole kernel over the devices
  const target::Target* machine = nullptr;
  const PreparedKernel* prepared = nullptr;
  double roofline_ns =
      0;  // setting.roofline.bound_ns: of the original kernel (variant 0), global shape
  double attainable_ns = 0;  // setting.roofline.attainable_ns: likewise, at the target's own peaks
  std::unique_ptr<lower::CandidateSpace> space;
  SpaceSample
      sample;  // the candidates scored: all, or a sample of large sections; units cut its positions

  // Which candidates the sweep may skip ([search] prune; prune.h): its seeds simulated when the
  // plan is built. Prunes nothing when pruning is off.
  Pruner pruner;

  // The mesh latency of a candidate of this space whose simulated (local) latency is compute_ns.
  double latency(double compute_ns) const { return setting.latency(compute_ns); }
};

// How the ranks of a sweep share the proofs, in two rounds: rank `rank` of `ranks` proves the
// variants of every ranks-th kernel, then searches every ranks-th of the job's distinct
// synthesis queries; after each round `exchange` hands its share_text() — its verdicts and
// synthesized lowerings — to the others and returns all ranks' share texts concatenated. The
// rest is then prepared from those: no solver call, no synthesis search, only rebuilding the
// recorded lowerings. A third exchange shares the pruning bounds: rank r simulates the seeds of
// every ranks-th space from the r-th and sends their bounds_line()s.
struct ProofShare {
  int rank = 0, ranks = 1;
  std::function<std::string(const std::string&)> exchange;  // needed when ranks > 1
};

// What a Plan may start from besides the job; all optional.
struct PlanInputs {
  std::string verdict_file;     // the proof cache file, read if present; save_verdicts() writes it
  std::string shared_verdicts;  // another Plan's verdicts_text(): not proved again here
  std::string synthesis_records;  // an earlier Plan's synthesis_records(): rebuilt, not searched
  ProofShare share;
  // Told what the prepare is doing as it goes (one line each: the caches at hand, each kernel's
  // variants, each (kernel, target)'s lowerings, the spaces built).
  std::function<void(const std::string&)> stage;
};

class Plan {
 public:
  // Prepares every (kernel, target) of the job and builds every space.
  explicit Plan(const Job& job, const PlanInputs& in = {});
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  const Job& job() const { return job_; }
  const std::vector<SpaceEntry>& spaces() const { return spaces_; }
  // The meshes scored: the job's [mesh] shapes in order, or "1" alone.
  const std::vector<mesh::MeshShape>& meshes() const { return meshes_; }
  int keys() const {
    return keys_;
  }  // (kernel, target, shape, mesh) keys: 1 + the last space's key
  const std::vector<WorkUnit>& units() const { return units_; }
  std::int64_t candidates() const;        // scored, over all spaces (the samples' sizes)
  std::int64_t space_candidates() const;  // in all spaces, sampled or not
  double prepare_seconds() const { return prepare_seconds_; }
  // Pruning seeds simulated on this rank (its share of the spaces when the ranks share).
  std::int64_t seeds_simulated() const { return seeds_simulated_; }
  void save_verdicts() const { verdicts_.save(); }
  std::string verdicts_text() const { return verdicts_.text(); }
  std::string share_text() const;  // verdicts and synthesized lowerings, for ProofShare::exchange
  // Every synthesis record this plan knows (searched here or received), for a later run's
  // PlanInputs::synthesis_records (`run` keeps them in `<archive>.synthesis`).
  std::string synthesis_records() const { return synthesis_.records_text(); }
  std::size_t solver_queries() const {
    return verdicts_.misses();
  }  // proofs not found in the caches
  std::size_t synthesis_searches() const {
    return synthesis_.searches();
  }  // not rebuilt from a share

  // Every swap query of every kernel (once per kernel: swaps do not depend on the target) and
  // every synthesized tile op per target, sorted by (kind, kernel, text).
  std::vector<store::ProofRecord> proofs() const;

 private:
  void prepare_all(const ProofShare& share, const std::function<void(const std::string&)>& stage);
  const PreparedKernel& prepared(int kernel, int target) const;

  const Job& job_;
  verify::VerdictCache verdicts_;
  lower::SynthesisCache synthesis_;
  std::vector<ir::Module> modules_;      // per job kernel
  std::deque<PreparedKernel> prepared_;  // per (kernel, target), kernel-major; never moved
  std::vector<mesh::MeshShape> meshes_;
  std::vector<SpaceEntry> spaces_;
  int keys_ = 0;
  std::vector<WorkUnit> units_;
  double prepare_seconds_ = 0;
  std::int64_t seeds_simulated_ = 0;
};

}  // namespace ts::sweep

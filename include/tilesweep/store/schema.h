// The records a sweep stores: plain values, one struct per archive table, all in one place.
// The store knows nothing about kernels or simulators; the sweep fills these in. The archive
// layout (column names, units, attributes) is documented in results/README.md; a change to any
// struct here is a change of the schema and must bump kSchemaVersion (archives and journals of
// another version are refused, never misread; archives back to kOldestReadableSchema are read,
// the columns they lack taking the values documented there).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>

namespace ts::store {

// 2: sharding and compute_ns columns, /best collective_ns (version 1: one device only).
// 3: /best attainable_ns (the bound at the target's own peaks; NaN when read from older archives).
// 4: /best cores (the NeuronCores the best candidate is split over; 1 from older archives).
inline constexpr int kSchemaVersion = 4;
inline constexpr int kOldestReadableSchema = 1;

// Per-engine busy time, indexed by kEngineNames order.
inline constexpr int kEngineCount = 5;
inline constexpr std::array<const char*, kEngineCount> kEngineNames = {"tensor", "vector", "scalar",
                                                                       "gpsimd", "dma"};
using EngineNs = std::array<double, kEngineCount>;

inline constexpr double kNotComputed = std::numeric_limits<double>::quiet_NaN();

// One scored (or rejected) candidate program: a row of /candidates.
struct CandidateRecord {
  std::string kernel;
  std::string target;
  std::string shape;       // "M=4096,K=1024,N=2048" ("" for a kernel without dims)
  std::string mesh = "1";  // device mesh, "1" for one device, else "2x2", ...
  std::string
      sharding;  // how the kernel is split over the mesh ("" on one device), mesh/sharding.h
  std::int32_t variant = 0;  // algebraic variant id
  std::int64_t choice = 0;   // instruction-choice id
  std::string config;        // tile config (strip/block/tile per stage), fusion, engines, bufs
  bool feasible = false;
  std::string reason;                // why infeasible ("" when feasible)
  double latency_ns = kNotComputed;  // on the mesh: compute_ns plus the collectives
  double compute_ns = kNotComputed;  // simulated latency of one device at its local shape
  double roofline_ns = kNotComputed;
  EngineNs busy_ns{};
  std::int64_t hbm_read_bytes = 0;
  std::int64_t hbm_write_bytes = 0;
  std::int64_t sbuf_peak_bytes = 0;
  std::int64_t psum_peak_bytes = 0;
  std::int64_t spill_bytes = 0;
  double collective_ns = 0;
  std::int8_t check = -1;  // numeric check: -1 not checked, 0 mismatch, 1 pass
  std::int32_t rank = 0;   // the MPI rank that scored it
  std::int64_t index = 0;  // candidate index in its (kernel, target, shape, mesh, sharding) space
  std::int64_t unit = 0;   // the work unit that produced it
};

// The best candidate of one (kernel, target, shape, mesh), with its baselines: a row of /best.
struct BestRecord {
  std::string kernel;
  std::string target;
  std::string shape;
  std::string mesh = "1";
  std::string sharding;  // the best candidate's sharding ("" on one device)
  std::int32_t variant = 0;
  std::int64_t choice = 0;
  std::int64_t index = 0;
  std::string config;
  std::int32_t cores = 1;            // NeuronCores its top-level loops are split over
  double latency_ns = kNotComputed;  // on the mesh: compute_ns plus collective_ns
  double compute_ns = kNotComputed;
  double collective_ns = 0;
  double roofline_ns = kNotComputed;  // AccelOpt's constants
  double attainable_ns =
      kNotComputed;  // the target description's own peaks (no candidate beats it)
  EngineNs busy_ns{};
  double heuristic_ns = kNotComputed;  // NaN: not computed (ablations off or infeasible)
  double no_algebra_ns = kNotComputed;
  double no_fusion_ns = kNotComputed;
  std::int64_t candidates = 0;  // candidates scored for this key
  std::int64_t infeasible = 0;  // of which infeasible
};

// One solver query: a row of /proofs.
struct ProofRecord {
  std::string kind;  // "swap" | "synthesis" | "fusion"
  std::string kernel;
  std::string text;     // the ops / query proved
  std::string verdict;  // "equivalent" | "not equivalent" | "unknown"
  double ms = 0;
};

// One completed work unit: a row of /progress. Unit ids are unique within a job.
struct ProgressRecord {
  std::int64_t unit = 0;
  std::string kernel;
  std::string target;
  std::string shape;
  std::string mesh = "1";
  std::string sharding;
  std::int64_t first = 0;  // first candidate index of the unit
  std::int64_t count = 0;  // candidate indices in the unit
  std::int32_t rank = 0;
  double seconds = 0;
  std::int64_t candidates = 0;  // candidates scored (feasible or not)
};

// Provenance and run summary: the attributes of /meta.
struct Meta {
  std::string tool_version;
  std::string git_commit;
  std::string job_name;
  std::string job_toml;  // the job file's text
  std::string job_hash;
  std::map<std::string, std::string> targets;         // target name -> description text
  std::map<std::string, std::string> kernel_sources;  // kernel file -> source text
  std::int64_t ranks = 1;
  std::int64_t threads = 1;
  std::string start_time;  // ISO 8601
  std::string end_time;
  std::map<std::string, double> phase_seconds;  // wall seconds per phase
  std::string status = "partial";               // "complete" | "partial"
  // Written as given (so tests can forge another version); read_archive refuses any value but
  // kSchemaVersion.
  std::int64_t schema_version = kSchemaVersion;
};

}  // namespace ts::store

#include "columns.h"

namespace ts::store::detail {
namespace {

template <class Rec>
constexpr EngineField<Rec> busy(int engine) {
  return {&Rec::busy_ns, engine};
}

}  // namespace

// The busy columns are named busy_<engine>_ns after kEngineNames.
std::span<const Column<CandidateRecord>> Table<CandidateRecord>::columns() {
  using R = CandidateRecord;
  static const Column<R> cols[] = {
      {"kernel", &R::kernel},
      {"target", &R::target},
      {"shape", &R::shape},
      {"mesh", &R::mesh},
      {"sharding", &R::sharding, 2},
      {"variant", &R::variant},
      {"choice", &R::choice},
      {"config", &R::config},
      {"feasible", &R::feasible},
      {"reason", &R::reason},
      {"latency_ns", &R::latency_ns},
      {"compute_ns", &R::compute_ns, 2},
      {"roofline_ns", &R::roofline_ns},
      {"busy_tensor_ns", busy<R>(0)},
      {"busy_vector_ns", busy<R>(1)},
      {"busy_scalar_ns", busy<R>(2)},
      {"busy_gpsimd_ns", busy<R>(3)},
      {"busy_dma_ns", busy<R>(4)},
      {"hbm_read_bytes", &R::hbm_read_bytes},
      {"hbm_write_bytes", &R::hbm_write_bytes},
      {"sbuf_peak_bytes", &R::sbuf_peak_bytes},
      {"psum_peak_bytes", &R::psum_peak_bytes},
      {"spill_bytes", &R::spill_bytes},
      {"collective_ns", &R::collective_ns},
      {"check", &R::check},
      {"rank", &R::rank},
      {"index", &R::index},
      {"unit", &R::unit},
  };
  return cols;
}

std::span<const Column<BestRecord>> Table<BestRecord>::columns() {
  using R = BestRecord;
  static const Column<R> cols[] = {
      {"kernel", &R::kernel},
      {"target", &R::target},
      {"shape", &R::shape},
      {"mesh", &R::mesh},
      {"sharding", &R::sharding, 2},
      {"variant", &R::variant},
      {"choice", &R::choice},
      {"index", &R::index},
      {"config", &R::config},
      {"latency_ns", &R::latency_ns},
      {"compute_ns", &R::compute_ns, 2},
      {"collective_ns", &R::collective_ns, 2},
      {"roofline_ns", &R::roofline_ns},
      {"attainable_ns", &R::attainable_ns, 3},
      {"cores", &R::cores, 4},
      {"busy_tensor_ns", busy<R>(0)},
      {"busy_vector_ns", busy<R>(1)},
      {"busy_scalar_ns", busy<R>(2)},
      {"busy_gpsimd_ns", busy<R>(3)},
      {"busy_dma_ns", busy<R>(4)},
      {"heuristic_ns", &R::heuristic_ns},
      {"no_algebra_ns", &R::no_algebra_ns},
      {"no_fusion_ns", &R::no_fusion_ns},
      {"candidates", &R::candidates},
      {"infeasible", &R::infeasible},
  };
  return cols;
}

std::span<const Column<ProofRecord>> Table<ProofRecord>::columns() {
  using R = ProofRecord;
  static const Column<R> cols[] = {
      {"kind", &R::kind},       {"kernel", &R::kernel}, {"text", &R::text},
      {"verdict", &R::verdict}, {"ms", &R::ms},
  };
  return cols;
}

std::span<const Column<ProgressRecord>> Table<ProgressRecord>::columns() {
  using R = ProgressRecord;
  static const Column<R> cols[] = {
      {"unit", &R::unit},
      {"kernel", &R::kernel},
      {"target", &R::target},
      {"shape", &R::shape},
      {"mesh", &R::mesh},
      {"sharding", &R::sharding, 2},
      {"first", &R::first},
      {"count", &R::count},
      {"rank", &R::rank},
      {"seconds", &R::seconds},
      {"candidates", &R::candidates},
  };
  return cols;
}

std::span<const Column<SourceRecord>> Table<SourceRecord>::columns() {
  using R = SourceRecord;
  static const Column<R> cols[] = {
      {"path", &R::path},
      {"job_name", &R::job_name},
      {"job_hash", &R::job_hash},
      {"tool_version", &R::tool_version},
      {"git_commit", &R::git_commit},
      {"job_toml", &R::job_toml},
      {"candidates_first", &R::candidates_first},
      {"candidates_count", &R::candidates_count},
      {"proofs_first", &R::proofs_first},
      {"proofs_count", &R::proofs_count},
      {"progress_first", &R::progress_first},
      {"progress_count", &R::progress_count},
  };
  return cols;
}

std::span<const Column<OriginRecord>> Table<OriginRecord>::columns() {
  using R = OriginRecord;
  static const Column<R> cols[] = {
      {"kernel", &R::kernel}, {"target", &R::target}, {"shape", &R::shape},
      {"mesh", &R::mesh},     {"source", &R::source},
  };
  return cols;
}

std::span<const Column<LibraryEntry>> Table<LibraryEntry>::columns() {
  using R = LibraryEntry;
  static const Column<R> cols[] = {
      {"kernel", &R::kernel},
      {"target", &R::target},
      {"shape", &R::shape},
      {"mesh", &R::mesh},
      {"sharding", &R::sharding, 2},
      {"variant", &R::variant},
      {"choice", &R::choice},
      {"index", &R::index},
      {"config", &R::config},
      {"latency_ns", &R::latency_ns},
      {"roofline_ns", &R::roofline_ns},
      {"roofline_pct", &R::roofline_pct},
      {"heuristic_ns", &R::heuristic_ns},
      {"archive", &R::archive},
      {"job_name", &R::job_name},
      {"tool_version", &R::tool_version},
      {"nki", &R::nki},
      {"nki_error", &R::nki_error},
  };
  return cols;
}

}  // namespace ts::store::detail

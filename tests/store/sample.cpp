#include "sample.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ts::store::test {
namespace {

const char* kKernels[] = {"rmsnorm_matmul", "attention", "gated_mlp", ""};
const char* kTargets[] = {"trn1", "trn2", "trn3"};

std::string shape_of(std::int64_t i) {
  return fmt::format("M={},K={},N={}", 1024 << (i % 3), 512 << (i % 2), 2048);
}

EngineNs busy_of(std::int64_t i) {
  return {1.5 * i, 2.25 * i, 0.0, i % 7 == 0 ? kNotComputed : 3.0, 1e9 + i};
}

}  // namespace

CandidateRecord sample_candidate(std::int64_t i) {
  CandidateRecord r;
  r.kernel = kKernels[i % 4];
  r.target = kTargets[i % 3];
  r.shape = shape_of(i);
  r.mesh = i % 5 == 0 ? "2x2" : "1";
  r.sharding = i % 5 == 0 ? "M:x,K:y+rs" : "";
  r.variant = static_cast<std::int32_t>(i % 11);
  r.choice = i * 7919 + (std::int64_t{1} << 40);
  r.config = fmt::format("strip=128x{};block={};tile=128x512;fuse={};engines=TVS;bufs={}",
                         512 * (1 + i % 4), 1 + i % 8, i % 2, 1 + i % 3);
  r.feasible = i % 4 != 3;
  r.reason = r.feasible ? "" : fmt::format("SBUF overflow: {} bytes > 24 MiB", 25000000 + i);
  r.latency_ns = r.feasible ? 1000.0 + 0.125 * i : kNotComputed;
  r.compute_ns = r.feasible ? 900.0 + 0.125 * i : kNotComputed;
  r.roofline_ns = 900.5;
  r.busy_ns = busy_of(i);
  r.hbm_read_bytes = i * 4096;
  r.hbm_write_bytes = (std::int64_t{1} << 33) + i;
  r.sbuf_peak_bytes = 24 * 1024 * 1024 - i;
  r.psum_peak_bytes = 16384;
  r.spill_bytes = i % 9 == 0 ? 1 << 20 : 0;
  r.collective_ns = i % 5 == 0 ? 12345.75 : 0.0;
  r.check = static_cast<std::int8_t>(i % 3 - 1);
  r.rank = static_cast<std::int32_t>(i % 4);
  r.index = i;
  r.unit = i / 256;
  return r;
}

BestRecord sample_best(std::int64_t i) {
  BestRecord r;
  r.kernel = kKernels[i % 3];
  r.target = kTargets[i % 3];
  r.shape = shape_of(i);
  r.mesh = "1";
  r.variant = static_cast<std::int32_t>(i);
  r.choice = 42 + i;
  r.index = 1000 + i;
  r.config = "strip=128x2048;block=4;tile=128x512;fuse=1;engines=TVS;bufs=2";
  r.latency_ns = 1234.5 + i;
  r.compute_ns = 1200.5 + i;
  r.collective_ns = 34.0;
  r.roofline_ns = 1000.25;
  r.attainable_ns = 1100.5 + i;
  r.cores = static_cast<std::int32_t>(1 + i % 8);
  r.busy_ns = busy_of(i);
  r.heuristic_ns = 2000.0 + i;
  r.no_algebra_ns = i % 2 ? kNotComputed : 1500.0;
  r.no_fusion_ns = kNotComputed;
  r.candidates = 100000 + i;
  r.infeasible = 25 * i;
  return r;
}

ProofRecord sample_proof(std::int64_t i) {
  static const char* verdicts[] = {"equivalent", "not equivalent", "unknown"};
  static const char* kinds[] = {"swap", "synthesis", "fusion"};
  return {kinds[i % 3], kKernels[i % 3],
          fmt::format("matmul(rmsnorm(x), w) -> rmsnorm(x) @ w #{}", i), verdicts[i % 3], 0.5 * i};
}

ProgressRecord sample_progress(std::int64_t i) {
  ProgressRecord r;
  r.unit = i;
  r.kernel = kKernels[i % 3];
  r.target = kTargets[i % 3];
  r.shape = shape_of(i);
  r.mesh = "1";
  r.first = i * 256;
  r.count = 256;
  r.rank = static_cast<std::int32_t>(i % 4);
  r.seconds = 0.75 * i;
  r.candidates = 250;
  return r;
}

Meta sample_meta() {
  Meta m;
  m.tool_version = "0.1.0";
  m.git_commit = "c4fa03c";
  m.job_name = "axon-suite";
  m.job_toml = "name = \"axon-suite\"\ntargets = [\"trn1\", \"trn2\"]\n";
  m.job_hash = "9f2c1e0d3b4a5968";
  m.targets = {{"trn1", "name = \"trn1\"\n[chip]\nneuron_cores = 2\n"}, {"trn2", ""}};
  m.kernel_sources = {
      {"kernels/axon/rmsnorm_matmul.py", "def f(x: f32[M, N]) -> f32[M, N]:\n    return x\n"}};
  m.ranks = 4;
  m.threads = 16;
  m.start_time = "2025-01-02T03:04:05Z";
  m.end_time = "2025-01-02T04:05:06Z";
  m.phase_seconds = {{"prove", 1.5}, {"sweep", 3600.25}, {"write", kNotComputed}};
  m.status = "complete";
  return m;
}

Archive sample_archive(std::int64_t candidates) {
  Archive a;
  a.meta = sample_meta();
  for (std::int64_t i = 0; i < candidates; ++i) a.candidates.push_back(sample_candidate(i));
  for (std::int64_t i = 0; i < 6; ++i) a.best.push_back(sample_best(i));
  for (std::int64_t i = 0; i < 5; ++i) a.proofs.push_back(sample_proof(i));
  for (std::int64_t i = 0; i < 4; ++i) a.progress.push_back(sample_progress(i));
  return a;
}

UnitResult sample_unit(std::int64_t unit, std::int64_t candidates) {
  UnitResult u{sample_progress(unit), {}};
  for (std::int64_t i = 0; i < candidates; ++i)
    u.candidates.push_back(sample_candidate(unit * 1000 + i));
  return u;
}

std::string dump(const CandidateRecord& r) {
  return fmt::format(
      "{}|{}|{}|{}|{}|v{}|c{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|chk{}|r{}|i{}|u{}", r.kernel,
      r.target, r.shape, r.mesh, r.sharding, r.variant, r.choice, r.config, r.feasible, r.reason,
      r.latency_ns, r.compute_ns, r.roofline_ns, r.busy_ns, r.hbm_read_bytes, r.hbm_write_bytes,
      r.sbuf_peak_bytes, r.psum_peak_bytes, r.spill_bytes, r.collective_ns, r.check, r.rank,
      r.index, r.unit);
}

std::string dump(const BestRecord& r) {
  return fmt::format("{}|{}|{}|{}|{}|v{}|c{}|i{}|{}|cores{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}",
                     r.kernel, r.target, r.shape, r.mesh, r.sharding, r.variant, r.choice, r.index,
                     r.config, r.cores, r.latency_ns, r.compute_ns, r.collective_ns, r.roofline_ns,
                     r.attainable_ns, r.busy_ns, r.heuristic_ns, r.no_algebra_ns, r.no_fusion_ns,
                     r.candidates, r.infeasible);
}

std::string dump(const ProofRecord& r) {
  return fmt::format("{}|{}|{}|{}|{}", r.kind, r.kernel, r.text, r.verdict, r.ms);
}

std::string dump(const ProgressRecord& r) {
  return fmt::format("u{}|{}|{}|{}|{}|{}|{}|{}|r{}|{}|{}", r.unit, r.kernel, r.target, r.shape,
                     r.mesh, r.sharding, r.first, r.count, r.rank, r.seconds, r.candidates);
}

std::string dump(const Meta& m) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", m.tool_version, m.git_commit,
                     m.job_name, m.job_toml, m.job_hash, m.targets, m.kernel_sources, m.ranks,
                     m.threads, m.start_time, m.end_time, m.phase_seconds, m.status,
                     m.schema_version);
}

std::string dump(const UnitResult& u) {
  return fmt::format("{} [{}]", dump(u.progress), fmt::join(dump_all(u.candidates), "; "));
}

}  // namespace ts::store::test

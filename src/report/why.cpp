#include "tilesweep/report/why.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>
#include <sstream>

#include "tilesweep/base/error.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/report/job_view.h"
#include "tilesweep/report/lookup.h"
#include "tilesweep/semantics/op_spec.h"
#include "tilesweep/sweep/mesh_setting.h"
#include "tilesweep/sweep/prepare.h"
#include "tilesweep/sweep/synthesis_file.h"
#include "tilesweep/target/target.h"

namespace ts::report {

const store::CandidateRecord* best_candidate(const store::Archive& a, const store::BestRecord& b) {
  for (const auto& c : a.candidates)
    if (c.index == b.index && c.kernel == b.kernel && c.target == b.target && c.shape == b.shape &&
        c.mesh == b.mesh && c.sharding == b.sharding)
      return &c;
  return nullptr;
}

std::vector<int> group_partitions(const std::string& config) {
  static const std::regex group(R"(\bg[0-9]+: pt=([0-9]+))");
  std::vector<int> out;
  for (auto it = std::sregex_iterator(config.begin(), config.end(), group);
       it != std::sregex_iterator(); ++it)
    out.push_back(std::stoi((*it)[1].str()));
  return out;
}

namespace {

std::string bytes_text(double bytes) {
  if (bytes >= 1024.0 * 1024.0) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0));
  if (bytes >= 1024.0) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

int target_partitions(const std::string& target) {
  try {
    return target::builtin_target(target).sbuf.partitions;
  } catch (const std::exception&) {
    return 0;
  }
}

bool has_program(const store::BestRecord& b) {
  return std::isfinite(b.latency_ns) && b.latency_ns > 0;
}

}  // namespace

std::string bound_phrase(const store::BestRecord& b, const store::CandidateRecord* c,
                         int partitions) {
  if (!has_program(b))
    return b.candidates > 0 && b.infeasible == b.candidates ? "no feasible candidate"
                                                            : "no program";
  std::size_t busiest = 0;
  for (std::size_t e = 1; e < b.busy_ns.size(); ++e)
    if (b.busy_ns[e] > b.busy_ns[busiest]) busiest = e;
  std::vector<std::string> parts;
  if (b.busy_ns[busiest] > 0)
    parts.push_back(fmt::format("{} {:.0f}% busy", store::kEngineNames[busiest],
                                100.0 * b.busy_ns[busiest] / b.latency_ns));
  if (b.collective_ns > 0)
    parts.push_back(fmt::format("collectives {:.0f}%", 100.0 * b.collective_ns / b.latency_ns));
  std::vector<int> pts = group_partitions(b.config);
  if (!pts.empty() && partitions > 0) {
    int used = *std::max_element(pts.begin(), pts.end());
    if (used < partitions) parts.push_back(fmt::format("{} of {} partitions", used, partitions));
  }
  if (c && c->spill_bytes > 0)
    parts.push_back(fmt::format("spills {}", bytes_text(double(c->spill_bytes))));
  return parts.empty() ? "-" : fmt::format("{}", fmt::join(parts, "; "));
}

namespace {

// The lines of a key with a program: engines, partitions, memory, the candidate.
std::vector<std::string> bound_details(const store::BestRecord& b, const store::CandidateRecord* c,
                                       int partitions) {
  std::vector<std::string> out;
  out.push_back(fmt::format("best {:.3f} us = {:.1f}% of the roofline bound {:.3f} us",
                            b.latency_ns / 1e3, 100.0 * b.roofline_ns / b.latency_ns,
                            b.roofline_ns / 1e3));
  std::vector<std::size_t> order(b.busy_ns.size());
  for (std::size_t e = 0; e < order.size(); ++e) order[e] = e;
  std::stable_sort(order.begin(), order.end(),
                   [&](auto x, auto y) { return b.busy_ns[x] > b.busy_ns[y]; });
  std::vector<std::string> engines;
  for (auto e : order)
    engines.push_back(fmt::format("{} {:.3f} us ({:.0f}%)", store::kEngineNames[e],
                                  b.busy_ns[e] / 1e3, 100.0 * b.busy_ns[e] / b.latency_ns));
  out.push_back(fmt::format("engines busy (of the latency): {}", fmt::join(engines, ", ")));
  if (b.mesh != "1")
    out.push_back(fmt::format("mesh {} sharding {}: compute {:.3f} us + collectives {:.3f} us",
                              b.mesh, b.sharding.empty() ? "-" : b.sharding, b.compute_ns / 1e3,
                              b.collective_ns / 1e3));
  std::vector<int> pts = group_partitions(b.config);
  if (!pts.empty()) {
    std::vector<std::string> groups;
    for (std::size_t g = 0; g < pts.size(); ++g) groups.push_back(fmt::format("g{} {}", g, pts[g]));
    out.push_back(fmt::format("partitions used per fused group: {} (of {} on {})",
                              fmt::join(groups, ", "),
                              partitions > 0 ? std::to_string(partitions) : "?", b.target));
  }
  if (c)
    out.push_back(fmt::format(
        "memory: HBM {} read, {} written, {} of them spilled; on-chip peaks per partition: "
        "SBUF {}, PSUM {}",
        bytes_text(double(c->hbm_read_bytes)), bytes_text(double(c->hbm_write_bytes)),
        bytes_text(double(c->spill_bytes)), bytes_text(double(c->sbuf_peak_bytes)),
        bytes_text(double(c->psum_peak_bytes))));
  else
    out.push_back("memory: not recorded (the best candidate's /candidates row was not kept)");
  out.push_back(fmt::format("candidate {} of {} scored ({} infeasible): {}", b.index, b.candidates,
                            b.infeasible, b.config));
  return out;
}

// Why the rebuilt space of a key has no program: each variant and fusion form's NoProgram
// reason, over the shardings of its mesh.
std::vector<std::string> no_program_reasons(const LoadedArchive& l, std::size_t row,
                                            lower::SynthesisCache& synthesis) {
  const store::BestRecord& b = l.archive.best[row];
  const store::Meta& meta = l.archive.meta;
  const store::SourceRecord& src = l.provenance.sources[l.provenance.best_origin[row].source];
  JobView view = parse_job_view(src.job_toml, meta.kernel_sources, src.path + ": /meta job_toml");
  const JobKernelRef* ref = view.kernel(b.kernel);
  if (!ref || ref->source.empty())
    throw UserError(fmt::format("kernel '{}' is not recorded in the archive", b.kernel));
  const target::Target& target = target::builtin_target(b.target);
  auto t = meta.targets.find(b.target);
  if (t == meta.targets.end() ||
      t->second != target.target_text + "\n# ---- isa ----\n" + target.isa_text)
    throw UserError(
        fmt::format("target '{}' of the archive differs from this tilesweep's", b.target));
  ir::Module module =
      ir::parse_module(meta.kernel_sources.at(ref->source), ref->source, sem::OpTable::builtin());
  const ir::Kernel& kernel = module.kernel(ref->name);
  sweep::PrepareOptions po;
  po.synthesis.max_depth = view.isa_depth;
  sweep::PreparedKernel pk = sweep::prepare_kernel(kernel, target.isa, synthesis, po, nullptr);
  lower::SpaceOptions so;
  so.max_block = view.max_block, so.max_lowerings = view.max_lowerings, so.bufs = view.bufs;
  so.cores = view.cores;
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& setting : sweep::mesh_settings(kernel, parse_record_shape(b.shape), target,
                                                  mesh::parse_mesh_shape(b.mesh))) {
    lower::CandidateSpace space(pk.space_variants(), target, setting.local, so);
    std::string where =
        setting.sharding.empty() ? "" : fmt::format(" (sharding {})", setting.sharding);
    if (space.size() > 0)
      out.push_back(fmt::format(
          "the rebuilt space{} has {} candidates (the search code changed since the archive "
          "was written?)",
          where, space.size()));
    for (const auto& u : space.counts().unsupported)
      if (seen.insert(u).second) out.push_back("no program: " + u + where);
  }
  if (out.empty()) out.push_back("no program, and the rebuilt space records no reason");
  return out;
}

// The lines of a key without a program.
std::vector<std::string> missing_details(const LoadedArchive& l, std::size_t row,
                                         lower::SynthesisCache& synthesis) {
  const store::BestRecord& b = l.archive.best[row];
  std::vector<std::string> out;
  if (b.candidates > 0) {
    out.push_back(fmt::format("all {} candidates scored were infeasible", b.candidates));
    std::set<std::string> reasons;
    for (const auto& c : l.archive.candidates)
      if (!c.feasible && c.kernel == b.kernel && c.target == b.target && c.shape == b.shape &&
          c.mesh == b.mesh && reasons.size() < 3 && reasons.insert(c.reason).second)
        out.push_back("infeasible: " + c.reason);
    return out;
  }
  try {
    return no_program_reasons(l, row, synthesis);
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (what.rfind("error: ", 0) == 0) what = what.substr(7);
    return {"no program; cannot rebuild its space to say why: " + what};
  }
}

bool matches(const store::BestRecord& b, const WhyFilter& f) {
  return (f.kernel.empty() || b.kernel == f.kernel) && (f.target.empty() || b.target == f.target) &&
         (f.shape.empty() || b.shape == f.shape) && (f.mesh.empty() || b.mesh == f.mesh);
}

}  // namespace

std::vector<Why> explain(const LoadedArchive& l, const WhyFilter& filter) {
  std::vector<Why> out;
  lower::SynthesisCache synthesis;  // shared by the keys without a program; the run's records first
  synthesis.absorb(
      sweep::read_synthesis_records(sweep::synthesis_path(l.path), l.archive.meta.tool_version));
  for (std::size_t row = 0; row < l.archive.best.size(); ++row) {
    const store::BestRecord& b = l.archive.best[row];
    if (!matches(b, filter)) continue;
    int partitions = target_partitions(b.target);
    const store::CandidateRecord* c = best_candidate(l.archive, b);
    Why w{b.kernel, b.target, b.shape, b.mesh, bound_phrase(b, c, partitions), {}};
    w.details =
        has_program(b) ? bound_details(b, c, partitions) : missing_details(l, row, synthesis);
    out.push_back(std::move(w));
  }
  if (out.empty()) {
    std::vector<std::string> keys;
    for (const auto& b : l.archive.best)
      if (keys.size() < 8)
        keys.push_back(fmt::format("{} {} {} mesh {}", b.kernel, b.target, b.shape, b.mesh));
    throw UserError(
        fmt::format("error: no (kernel, target, shape, mesh) of '{}' matches; it has {} rows: {}{}",
                    l.path, l.archive.best.size(), fmt::join(keys, "; "),
                    l.archive.best.size() > keys.size() ? "; ..." : ""));
  }
  return out;
}

}  // namespace ts::report

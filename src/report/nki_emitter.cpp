// NkiEmitter: re-materializes a recorded best candidate as the sweep built it (plan.cpp): the
// kernel prepared on the builtin target with the job's isa_depth, the candidate space at the
// shape with the job's max_block / max_lowerings / bufs, then candidate `index`.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sstream>

#include "tilesweep/base/error.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/lower/fusion.h"
#include "tilesweep/lower/nki.h"
#include "tilesweep/lower/nki_shapes.h"
#include "tilesweep/report/job_view.h"
#include "tilesweep/report/lookup.h"
#include "tilesweep/report/select.h"
#include "tilesweep/semantics/op_spec.h"
#include "tilesweep/sweep/mesh_setting.h"
#include "tilesweep/sweep/prepare.h"
#include "tilesweep/sweep/score.h"
#include "tilesweep/target/target.h"

namespace ts::report {

struct NkiEmitter::Impl {
  struct Prepared {
    JobView view;
    std::unique_ptr<ir::Module> module;
    const ir::Kernel* kernel = nullptr;
    const target::Target* target = nullptr;
    sweep::PreparedKernel pk;
  };
  lower::SynthesisCache synthesis;
  std::map<std::string, std::unique_ptr<Prepared>> prepared;  // by (job hash, kernel, target)

  const Prepared& prepare(const store::Meta& meta, const store::SourceRecord& src,
                          const store::BestRecord& b);
};

const NkiEmitter::Impl::Prepared& NkiEmitter::Impl::prepare(const store::Meta& meta,
                                                            const store::SourceRecord& src,
                                                            const store::BestRecord& b) {
  std::string key = src.job_hash + "\n" + src.path + "\n" + b.kernel + "\n" + b.target;
  if (auto it = prepared.find(key); it != prepared.end()) return *it->second;
  auto p = std::make_unique<Prepared>();
  p->view = parse_job_view(src.job_toml, meta.kernel_sources, src.path + ": /meta job_toml");
  const JobKernelRef* ref = p->view.kernel(b.kernel);
  if (!ref) throw UserError(fmt::format("kernel '{}' is not in job '{}'", b.kernel, src.job_name));
  if (ref->source.empty())
    throw UserError(
        fmt::format("kernel file '{}' is not recorded in /meta kernel_sources", ref->file));
  p->target = &target::builtin_target(b.target);
  auto t = meta.targets.find(b.target);
  std::string builtin = p->target->target_text + "\n# ---- isa ----\n" + p->target->isa_text;
  if (t == meta.targets.end() || t->second != builtin)
    throw UserError(fmt::format(
        "target '{}' of the archive differs from this tilesweep's built-in description", b.target));
  p->module = std::make_unique<ir::Module>(
      ir::parse_module(meta.kernel_sources.at(ref->source), ref->source, sem::OpTable::builtin()));
  p->kernel = &p->module->kernel(ref->name);
  sweep::PrepareOptions o;
  o.synthesis.max_depth = p->view.isa_depth;
  p->pk = sweep::prepare_kernel(*p->kernel, p->target->isa, synthesis, o, nullptr);
  return *prepared.emplace(key, std::move(p)).first->second;
}

namespace {

// `prog`, candidate `c` of `space` (at `dims`, built with `so`), as NKI source: generic in the
// shape by the rule of `lower --nki-shapes generic` when `generic`, else asserted to `dims`.
std::string nki_source(const lower::CandidateSpace& space, const lower::Candidate& c,
                       const lower::Program& prog, const sweep::PreparedKernel& pk,
                       const ir::Kernel& k, const target::Target& t, const sem::DimEnv& dims,
                       const lower::SpaceOptions& so, lower::NkiApi api, bool generic) {
  if (!generic) return lower::emit_nki(prog, lower::nki_params(k), api);
  std::vector<std::string> names;
  for (const auto& param : k.params) names.push_back(param.name);
  auto probes = lower::probe_spaces(pk.space_variants(), t, dims, so);
  lower::NkiShapes shapes = lower::generic_form(space, c, prog, dims, probes, names);
  return lower::emit_nki(prog, lower::nki_params(k), api, &shapes);
}

// Where the recorded configuration cannot be lowered at `dims` (`misfit` says why: the lowering
// builds no partial tiles), its kernel may still take `dims` as it is: generic in the dims that
// differ, with partial last tiles or the multiples they need. Then that kernel, with the latency
// simulated at the entry's shape; else `misfit` and why the generic kernel does not take it.
NkiEmitter::Reinstance serve_generic(const lower::CandidateSpace& recorded,
                                     const store::BestRecord& b, const sweep::PreparedKernel& pk,
                                     const ir::Kernel& k, const target::Target& t,
                                     const lower::SpaceOptions& so, const sem::DimEnv& dims,
                                     lower::NkiApi api, const std::string& misfit) {
  sem::DimEnv built = parse_record_shape(b.shape);
  lower::Program prog = recorded.materialize(b.index).value();
  prog.config = b.config;
  std::vector<std::string> names;
  for (const auto& param : k.params) names.push_back(param.name);
  auto probes = lower::probe_spaces(pk.space_variants(), t, built, so);
  lower::NkiShapes shapes =
      lower::generic_form(recorded, recorded.decode(b.index), prog, built, probes, names);
  std::string why;
  if (!lower::takes_shape(shapes, built, dims, &why))
    return {"",
            fmt::format("{}; the entry's generic kernel does not take it either: {}", misfit, why)};
  sweep::CandidateScore score = sweep::score_program(prog, t);
  std::string note = fmt::format(
      "the entry's kernel itself takes this shape (generic in {}{}); latency simulated at the "
      "entry's shape {}",
      fmt::join(shapes.generic, ", "),
      shapes.partial_dims.empty()
          ? ""
          : fmt::format(", partial last tiles in {}", fmt::join(shapes.partial_dims, ", ")),
      b.shape);
  return {lower::emit_nki(prog, lower::nki_params(k), api, &shapes), "", score.sim.latency_ns,
          note};
}

}  // namespace

NkiEmitter::NkiEmitter() : impl_(std::make_unique<Impl>()) {}
NkiEmitter::~NkiEmitter() = default;

NkiResult NkiEmitter::emit(const store::Meta& meta, const store::SourceRecord& src,
                           const store::BestRecord& b, lower::NkiApi api, bool generic) {
  try {
    const Impl::Prepared& p = impl_->prepare(meta, src, b);
    lower::SpaceOptions so;
    so.max_block = p.view.max_block, so.max_lowerings = p.view.max_lowerings, so.bufs = p.view.bufs;
    so.cores = p.view.cores;
    // On a mesh the candidate is the per-device kernel at its sharding's local shape.
    sem::DimEnv dims = parse_record_shape(b.shape);
    std::string header;
    if (b.mesh != "1") {
      const ir::Kernel& original = p.pk.variants.variants[0].kernel;
      bool found = false;
      for (auto& setting :
           sweep::mesh_settings(original, dims, *p.target, mesh::parse_mesh_shape(b.mesh)))
        if (setting.sharding == b.sharding) dims = setting.local, found = true;
      if (!found)
        return {"", fmt::format("sharding '{}' is not a choice on mesh {}", b.sharding, b.mesh)};
      std::vector<std::string> local;
      for (const auto& [dim, size] : dims) local.push_back(fmt::format("{}={}", dim, size));
      header = fmt::format(
          "# The per-device kernel of {} on mesh {} with sharding {}: local shape {}; the "
          "collectives that complete the outputs are not part of it.\n",
          b.shape, b.mesh, b.sharding, fmt::join(local, ","));
    }
    lower::CandidateSpace space(p.pk.space_variants(), *p.target, dims, so);
    if (b.index < 0 || b.index >= space.size())
      return {"", fmt::format("candidate {} is outside the re-built space of {} candidates (the "
                              "search code changed "
                              "since the archive was written)",
                              b.index, space.size())};
    lower::Program prog = space.materialize(b.index).value();
    prog.config = space.describe(b.index);
    if (prog.config != b.config)
      return {"", fmt::format("candidate {} re-builds as '{}', not the recorded '{}' (the search "
                              "code changed since "
                              "the archive was written)",
                              b.index, prog.config, b.config)};
    // A mesh entry's per-device kernel stays at its local shape (its sharding fixes it).
    return {header + nki_source(space, space.decode(b.index), prog, p.pk, *p.kernel, *p.target,
                                dims, so, api, generic && b.mesh == "1"),
            ""};
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (what.rfind("error: ", 0) == 0) what = what.substr(7);
    return {"", what};
  }
}

namespace {

// The instructions of `p` in program order: what must carry over to another shape.
std::vector<std::string> instruction_names(const lower::Program& p) {
  std::vector<std::string> out;
  for (const auto& in : p.insts) out.push_back(in.spec->op.name);
  return out;
}

// Why candidate `c`'s tiles do not divide the groups of `space` at `dims` ("" when they do).
std::string tiles_misfit(const lower::CandidateSpace& space, const lower::Candidate& c,
                         const ir::Kernel& k, const sem::DimEnv& dims) {
  lower::ProgramPlan plan = space.plan(c);
  for (std::size_t g = 0; g < plan.groups.size() && g < c.tiling.size(); ++g) {
    lower::GroupExtent e = lower::group_extent(k, plan.groups[g], dims);
    const lower::GroupTiling& t = c.tiling[g];
    if (e.rows % t.pt != 0)
      return fmt::format("group {}: its {}-row tiles do not divide the {} rows at this shape", g,
                         t.pt, e.rows);
    std::int64_t free_extent = e.has_matmul && !e.matmul_n.empty() ? e.matmul_n.front() : e.cols;
    if (t.free > 0 && free_extent % t.free != 0)
      return fmt::format(
          "group {}: its free tile of {} does not divide the {} columns at this shape", g, t.free,
          free_extent);
  }
  return "";
}

}  // namespace

NkiEmitter::Reinstance NkiEmitter::reinstantiate(const store::Meta& meta,
                                                 const store::SourceRecord& src,
                                                 const store::BestRecord& b,
                                                 const sem::DimEnv& dims, lower::NkiApi api,
                                                 bool generic) {
  try {
    if (b.mesh != "1")
      return {"", "a mesh entry is not re-instantiated (its sharding fixes the local shape)"};
    const Impl::Prepared& p = impl_->prepare(meta, src, b);
    lower::SpaceOptions so;
    so.max_block = p.view.max_block, so.max_lowerings = p.view.max_lowerings, so.bufs = p.view.bufs;
    so.cores = p.view.cores;
    lower::CandidateSpace recorded(p.pk.space_variants(), *p.target, parse_record_shape(b.shape),
                                   so);
    if (b.index < 0 || b.index >= recorded.size() || recorded.describe(b.index) != b.config)
      return {"",
              "the recorded candidate no longer re-builds (the search code changed since the "
              "archive was written)"};
    lower::Candidate c = recorded.decode(b.index);
    lower::CandidateSpace asked(p.pk.space_variants(), *p.target, dims, so);
    const auto from = recorded.sections().at(static_cast<std::size_t>(c.section));
    auto to = asked.sections();
    auto it = std::find_if(to.begin(), to.end(), [&](const auto& s) {
      return s.variant == from.variant && s.fused == from.fused && s.swapped == from.swapped;
    });
    if (it == to.end()) return {"", "its variant and fusion form have no program at this shape"};
    c.section = static_cast<int>(it - to.begin());
    const ir::Kernel& variant = asked.variant_kernel(c.variant);
    if (std::string why = tiles_misfit(asked, c, variant, dims); !why.empty()) {
      if (generic)
        return serve_generic(recorded, b, p.pk, *p.kernel, *p.target, so, dims, api, why);
      return {"", why};
    }
    lower::Program prog = asked.materialize(c).value();
    if (instruction_names(prog) != instruction_names(recorded.materialize(b.index).value()))
      return {"",
              "its instruction choices do not carry over to this shape (another lowering would be "
              "picked)"};
    sweep::CandidateScore score = sweep::score_program(prog, *p.target);
    if (!score.feasible) return {"", "it does not fit at this shape: " + score.reason};
    prog.config = b.config + " (re-instantiated at another shape)";
    return {nki_source(asked, c, prog, p.pk, *p.kernel, *p.target, dims, so, api, generic), "",
            score.sim.latency_ns};
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (what.rfind("error: ", 0) == 0) what = what.substr(7);
    return {"", what};
  }
}

}  // namespace ts::report

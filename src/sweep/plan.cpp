#include "tilesweep/sweep/plan.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/semantics/op_spec.h"
#include "tilesweep/sim/roofline.h"
#include "tilesweep/sim/target.h"

namespace ts::sweep {

namespace {

lower::SpaceOptions space_options(const Search& s) {
  lower::SpaceOptions o;
  o.max_block = s.max_block;
  o.max_lowerings = s.max_lowerings;
  o.bufs = s.bufs;
  return o;
}

}  // namespace

Plan::Plan(const Job& job, const std::string& verdict_file, const std::string& shared_verdicts, const ProofShare& share)
    : job_(job), verdicts_(verdict_file) {
  auto t0 = std::chrono::steady_clock::now();
  verdicts_.absorb(shared_verdicts);
  for (const auto& jk : job.kernels) modules_.push_back(ir::parse_module(jk.source, jk.file, sem::OpTable::builtin()));
  if (job.mesh)
    for (const auto& m : job.mesh->shapes) meshes_.push_back(mesh::parse_mesh_shape(m.text));
  else
    meshes_.push_back(mesh::MeshShape{{1}});
  std::optional<mesh::TopologyKind> topology;
  if (job.mesh && !job.mesh->topology.empty()) topology = mesh::parse_topology(job.mesh->topology);
  std::vector<std::int64_t> sizes;
  const int targets = static_cast<int>(job.targets.size()), pairs = static_cast<int>(job.kernels.size()) * targets;
  if (share.ranks > 1) {
    for (int p = share.rank; p < pairs; p += share.ranks) prepare(p / targets, p % targets);
    verdicts_.absorb(share.exchange(verdicts_.text()));
  }
  for (int p = 0; p < pairs; ++p)
    if (share.ranks <= 1 || p % share.ranks != share.rank) prepare(p / targets, p % targets);
  for (int k = 0; k < static_cast<int>(job.kernels.size()); ++k) {
    const JobKernel& jk = job.kernels[k];
    for (int t = 0; t < targets; ++t) {
      const PreparedKernel& pk = prepared(k, t);
      const sim::Target& machine = sim::builtin_target(job.targets[t]);
      for (int s = 0; s < static_cast<int>(jk.shapes.size()); ++s) {
        for (int m = 0; m < static_cast<int>(meshes_.size()); ++m, ++keys_) {
          for (MeshSetting& setting :
               mesh_settings(pk.variants.variants[0].kernel, shape_env(jk.shapes[s]), machine, meshes_[m], topology)) {
            SpaceEntry e;
            e.kernel = k, e.target = t, e.shape = s, e.mesh = m, e.key = keys_;
            e.label = jk.label, e.target_name = job.targets[t], e.shape_name = shape_text(jk.shapes[s]);
            e.dims = setting.local;
            e.roofline_ns = setting.roofline.bound_ns;
            e.setting = std::move(setting);
            e.machine = &machine, e.prepared = &pk;
            e.space = std::make_unique<lower::CandidateSpace>(pk.space_variants(), machine, e.dims,
                                                              space_options(job.search));
            e.sample = SpaceSample(e.space->sections(), job.search.max_section_candidates, job.seed);
            sizes.push_back(e.sample.size());
            spaces_.push_back(std::move(e));
          }
        }
      }
    }
  }
  units_ = cut_units(sizes, job.search.unit_size);
  prepare_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

const PreparedKernel& Plan::prepare(int kernel, int target) {
  PrepareOptions o;
  o.synthesis.max_depth = job_.search.isa_depth;
  const ir::Kernel& k = modules_[kernel].kernel(job_.kernels[kernel].name);
  prepared_.push_back(prepare_kernel(k, sim::builtin_target(job_.targets[target]).isa, synthesis_, o, &verdicts_));
  prepared_keys_.emplace_back(kernel, target);
  return prepared_.back();
}

const PreparedKernel& Plan::prepared(int kernel, int target) const {
  auto it = std::find(prepared_keys_.begin(), prepared_keys_.end(), std::pair(kernel, target));
  return prepared_[static_cast<std::size_t>(it - prepared_keys_.begin())];
}

std::int64_t Plan::candidates() const {
  std::int64_t n = 0;
  for (const auto& e : spaces_) n += e.sample.size();
  return n;
}

std::int64_t Plan::space_candidates() const {
  std::int64_t n = 0;
  for (const auto& e : spaces_) n += e.space->size();
  return n;
}

std::vector<store::ProofRecord> Plan::proofs() const {
  std::vector<store::ProofRecord> out;
  for (std::size_t i = 0; i < prepared_.size(); ++i) {
    auto [k, t] = prepared_keys_[i];
    const PreparedKernel& pk = prepared_[i];
    const std::string& label = job_.kernels[k].label;
    if (t == 0)
      for (const auto& p : pk.variants.proofs)
        out.push_back({"swap", label, fmt::format("{} past {} (clone degree {})", p.op1, p.op2, p.clone_degree),
                       verify::verdict_name(p.verdict.kind), p.verdict.ms});
    for (std::size_t v = 0; v < pk.choices.size(); ++v)
      for (const auto& op : pk.choices[v].ops) {
        if (!op.synthesis) continue;
        const auto& r = *op.synthesis;
        out.push_back({"synthesis", label,
                       fmt::format("{} variant {} {} [{}]: {} lowering(s)", job_.targets[t], v, op.label, op.tile,
                                   r.lowerings.size()),
                       r.lowerings.empty() ? "unknown" : "equivalent", r.proof_ms});
      }
  }
  auto key = [](const store::ProofRecord& r) { return std::tie(r.kind, r.kernel, r.text); };
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  out.erase(std::unique(out.begin(), out.end(), [&](const auto& a, const auto& b) { return key(a) == key(b); }),
            out.end());
  return out;
}

}  // namespace ts::sweep

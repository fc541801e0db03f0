#include "tilesweep/sweep/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <set>
#include <tuple>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/semantics/op_spec.h"
#include "tilesweep/sim/roofline.h"
#include "tilesweep/target/target.h"

namespace ts::sweep {

namespace {

lower::SpaceOptions space_options(const Search& s) {
  lower::SpaceOptions o;
  o.max_block = s.max_block;
  o.max_lowerings = s.max_lowerings;
  o.bufs = s.bufs;
  o.engines_per_op = s.engines_per_op;
  o.cores = s.cores;
  return o;
}

// A share text: "<verdict bytes> <synthesis bytes>\n", then both texts.
std::string pack_share(const std::string& verdicts, const std::string& synthesis) {
  return fmt::format("{} {}\n", verdicts.size(), synthesis.size()) + verdicts + synthesis;
}

// Feeds every share text of a concatenation into the caches.
void absorb_shares(const std::string& all, verify::VerdictCache& verdicts,
                   lower::SynthesisCache& synthesis) {
  std::size_t at = 0;
  while (at < all.size()) {
    std::size_t eol = all.find('\n', at), v = 0, s = 0;
    TS_CHECK(eol != std::string::npos && std::sscanf(all.c_str() + at, "%zu %zu", &v, &s) == 2 &&
                 eol + 1 + v + s <= all.size(),
             "malformed proof share at byte {}", at);
    verdicts.absorb(all.substr(eol + 1, v));
    synthesis.absorb(all.substr(eol + 1 + v, s));
    at = eol + 1 + v + s;
  }
}

}  // namespace

Plan::Plan(const Job& job, const PlanInputs& in) : job_(job), verdicts_(in.verdict_file) {
  auto t0 = std::chrono::steady_clock::now();
  const auto& stage = in.stage;
  const auto& share = in.share;
  auto tell = [&](const std::string& what) {
    if (stage) stage(what);
  };
  verdicts_.absorb(in.shared_verdicts);
  synthesis_.absorb(in.synthesis_records);
  if (verdicts_.size() > 0 || synthesis_.records() > 0)
    tell(fmt::format("at hand from an earlier run: {} proof verdicts, {} synthesis records",
                     verdicts_.size(), synthesis_.records()));
  for (const auto& jk : job.kernels)
    modules_.push_back(ir::parse_module(jk.source, jk.file, sem::OpTable::builtin()));
  if (job.mesh)
    for (const auto& m : job.mesh->shapes) meshes_.push_back(mesh::parse_mesh_shape(m.text));
  else
    meshes_.push_back(mesh::MeshShape{{1}});
  std::optional<mesh::TopologyKind> topology;
  if (job.mesh && !job.mesh->topology.empty()) topology = mesh::parse_topology(job.mesh->topology);
  prepare_all(share, stage);
  tell("building the candidate spaces");
  std::vector<std::int64_t> sizes;
  const int targets = static_cast<int>(job.targets.size());
  for (int k = 0; k < static_cast<int>(job.kernels.size()); ++k) {
    const JobKernel& jk = job.kernels[k];
    for (int t = 0; t < targets; ++t) {
      const PreparedKernel& pk = prepared(k, t);
      const target::Target& machine = target::builtin_target(job.targets[t]);
      for (int s = 0; s < static_cast<int>(jk.shapes.size()); ++s) {
        for (int m = 0; m < static_cast<int>(meshes_.size()); ++m, ++keys_) {
          for (MeshSetting& setting :
               mesh_settings(pk.variants.variants[0].kernel, shape_env(jk.shapes[s]), machine,
                             meshes_[m], topology, job.search.cores, pk.variant_kernels())) {
            SpaceEntry e;
            e.kernel = k, e.target = t, e.shape = s, e.mesh = m, e.key = keys_;
            e.label = jk.label, e.target_name = job.targets[t],
            e.shape_name = shape_text(jk.shapes[s]);
            e.dims = setting.local;
            e.roofline_ns = setting.roofline.bound_ns;
            e.attainable_ns = setting.roofline.attainable_ns;
            e.setting = std::move(setting);
            e.machine = &machine, e.prepared = &pk;
            e.space = std::make_unique<lower::CandidateSpace>(pk.space_variants(), machine, e.dims,
                                                              space_options(job.search));
            e.sample =
                SpaceSample(e.space->sections(), job.search.max_section_candidates, job.seed);
            sizes.push_back(e.sample.size());
            spaces_.push_back(std::move(e));
          }
        }
      }
    }
  }
  if (job.search.prune) {
    tell("pruning bounds: simulating each space's seeds");
    PruneOptions po;
    po.keep = job.search.keep_top;
    po.ablations = job.search.ablations;
    // Each rank simulates the seeds of its share of the spaces; the bounds are exchanged (they
    // depend only on the space, so every rank ends with the same pruners).
    std::vector<PruneBounds> bounds(spaces_.size());
    std::string mine;
    for (std::size_t i = 0; i < spaces_.size(); ++i) {
      if (share.ranks > 1 && static_cast<int>(i % share.ranks) != share.rank) continue;
      const SpaceEntry& e = spaces_[i];
      bounds[i] = prune_bounds(*e.space, e.sample, *e.machine, po);
      seeds_simulated_ += bounds[i].seeds;
      mine += bounds_line(static_cast<std::int64_t>(i), bounds[i]);
    }
    if (share.ranks > 1) read_bounds_lines(share.exchange(mine), bounds);
    std::int64_t seeds = 0;
    for (std::size_t i = 0; i < spaces_.size(); ++i) {
      SpaceEntry& e = spaces_[i];
      seeds += bounds[i].seeds;
      if (e.setting.collectives.empty())
        e.pruner = Pruner(bounds[i], {});
      else
        e.pruner =
            Pruner(bounds[i], [setting = e.setting](double ns) { return setting.latency(ns); });
    }
    tell(fmt::format("pruning bounds: {} seeds simulated{}", seeds,
                     share.ranks > 1 ? fmt::format(", {} on this rank", seeds_simulated_) : ""));
  }
  units_ = cut_units(sizes, job.search.unit_size);
  tell(fmt::format("{} spaces, {} candidates to score in {} units", spaces_.size(), candidates(),
                   units_.size()));
  prepare_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Each rank does its share of each stage's questions, then the ranks exchange answers, so that
// every proof and every synthesis search of the job runs on exactly one rank.
void Plan::prepare_all(const ProofShare& share,
                       const std::function<void(const std::string&)>& stage) {
  auto tell = [&](const std::string& what) {
    if (stage) stage(what);
  };
  PrepareOptions o;
  o.synthesis.max_depth = job_.search.isa_depth;
  const int kernels = static_cast<int>(job_.kernels.size()),
            targets = static_cast<int>(job_.targets.size());
  auto mine = [&](int i) { return share.ranks <= 1 || i % share.ranks == share.rank; };
  auto exchange = [&] {
    if (share.ranks > 1) absorb_shares(share.exchange(share_text()), verdicts_, synthesis_);
  };
  auto kernel = [&](int k) -> const ir::Kernel& {
    return modules_[k].kernel(job_.kernels[k].name);
  };
  // Variants, once per kernel: they do not depend on the target.
  std::vector<mutate::VariantSet> variants(kernels);
  std::vector<double> propagate_ms(kernels);
  for (bool own : {true, false}) {
    for (int k = 0; k < kernels; ++k) {
      if (mine(k) != own) continue;
      auto t0 = std::chrono::steady_clock::now();
      variants[k] = mutate::propagate(kernel(k), o.propagate, &verdicts_);
      propagate_ms[k] =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (own)
        tell(fmt::format("variants of {} ({}/{}): {} proved in {:.1f} s", job_.kernels[k].label,
                         k + 1, kernels, variants[k].variants.size(), propagate_ms[k] / 1000.0));
    }
    if (own) exchange();
  }
  // Synthesis: the job's distinct queries over every (kernel, target, variant), in job order,
  // dealt out to the ranks in turn.
  tell("instruction lowerings (ISA synthesis)");
  if (share.ranks > 1) {
    std::set<std::string> seen;
    int dealt = 0;
    for (int k = 0; k < kernels; ++k)
      for (int t = 0; t < targets; ++t) {
        const sem::InstrTable& isa = target::builtin_target(job_.targets[t]).isa;
        for (const auto& v : variants[k].variants)
          for (const auto& q : lower::synthesis_queries(v.kernel, isa, o.synthesis))
            if (q.op && seen.insert(lower::SynthesisCache::key(*q.op, isa, q.options)).second &&
                mine(dealt++))
              synthesis_.get(*q.op, isa, q.options, &verdicts_);
      }
    tell(fmt::format("{} distinct synthesis queries, {} searched on this rank; exchanging",
                     seen.size(), synthesis_.searches()));
    exchange();
  }
  for (int k = 0; k < kernels; ++k)
    for (int t = 0; t < targets; ++t) {
      auto t0 = std::chrono::steady_clock::now();
      std::size_t searched = synthesis_.searches();
      prepared_.push_back(prepare_choices(variants[k], target::builtin_target(job_.targets[t]).isa,
                                          synthesis_, o, &verdicts_));
      prepared_.back().propagate_ms = propagate_ms[k];
      tell(fmt::format(
          "lowerings of {} on {} ({}/{}): {} searched in {:.1f} s", job_.kernels[k].label,
          job_.targets[t], k * targets + t + 1, kernels * targets, synthesis_.searches() - searched,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
    }
}

const PreparedKernel& Plan::prepared(int kernel, int target) const {
  return prepared_[static_cast<std::size_t>(kernel) * job_.targets.size() +
                   static_cast<std::size_t>(target)];
}

std::string Plan::share_text() const { return pack_share(verdicts_.text(), synthesis_.text()); }

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
    const std::size_t k = i / job_.targets.size(), t = i % job_.targets.size();
    const PreparedKernel& pk = prepared_[i];
    const std::string& label = job_.kernels[k].label;
    if (t == 0)
      for (const auto& p : pk.variants.proofs)
        out.push_back({"swap", label,
                       fmt::format("{} past {} (clone degree {})", p.op1, p.op2, p.clone_degree),
                       verify::verdict_name(p.verdict.kind), p.verdict.ms});
    for (std::size_t v = 0; v < pk.choices.size(); ++v)
      for (const auto& op : pk.choices[v].ops) {
        if (!op.synthesis) continue;
        const auto& r = *op.synthesis;
        out.push_back({"synthesis", label,
                       fmt::format("{} variant {} {} [{}]: {} lowering(s)", job_.targets[t], v,
                                   op.label, op.tile, r.lowerings.size()),
                       r.lowerings.empty() ? "unknown" : "equivalent", r.proof_ms});
      }
  }
  auto key = [](const store::ProofRecord& r) { return std::tie(r.kind, r.kernel, r.text); };
  std::stable_sort(out.begin(), out.end(),
                   [&](const auto& a, const auto& b) { return key(a) < key(b); });
  out.erase(std::unique(out.begin(), out.end(),
                        [&](const auto& a, const auto& b) { return key(a) == key(b); }),
            out.end());
  return out;
}

}  // namespace ts::sweep

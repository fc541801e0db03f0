#include "tilesweep/lower/instruction_choices.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "tilesweep/base/hash.h"
#include "tilesweep/ir/graph_printer.h"
#include "tilesweep/lower/frame.h"
#include "tilesweep/lower/index_source.h"
#include "tilesweep/lower/split_reduction.h"

namespace ts::lower {

const SynthesisResult& SynthesisCache::get(const TileOp& op, const sem::InstrTable& isa,
                                           const SynthesisOptions& options,
                                           verify::VerdictCache* verdicts) {
  // The result depends on the ISA (targets differ: dma_transpose, engines) and the budgets as
  // much as on the op: all are in the key, or the order of calls would decide what a target gets.
  const std::string key = SynthesisCache::key(op, isa, options);
  const std::string id = fmt::format("{:016x}", hash_bytes(key));
  std::string record;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = results_.find(key);
    if (it != results_.end()) {
      ++hits_;
      return it->second;
    }
    if (auto r = records_.find(id); r != records_.end()) record = r->second;
  }
  // Outside the lock: slow.
  SynthesisResult r = record.empty() ? synthesize(op.kernel, isa, options, verdicts)
                                     : replay_synthesis(op.kernel, isa, record);
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, fresh] = results_.emplace(key, std::move(r));
  if (fresh && record.empty()) searched_[id] = synthesis_record(it->second);
  return it->second;
}

std::size_t SynthesisCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return results_.size();
}

std::size_t SynthesisCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

std::size_t SynthesisCache::searches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return searched_.size();
}

std::string SynthesisCache::text() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& [id, record] : searched_) out += id + " " + record + "\n";
  return out;
}

std::string SynthesisCache::records_text() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, std::string> all = records_;
  all.insert(searched_.begin(), searched_.end());
  std::string out;
  for (const auto& [id, record] : all) out += id + " " + record + "\n";
  return out;
}

std::size_t SynthesisCache::records() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_.size();
}

void SynthesisCache::absorb(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::lock_guard<std::mutex> lock(mu_);
  while (std::getline(in, line)) {
    auto space = line.find(' ');
    if (space == std::string::npos) continue;
    records_.emplace(line.substr(0, space), line.substr(space + 1));
  }
}

std::string SynthesisCache::key(const TileOp& op, const sem::InstrTable& isa,
                                const SynthesisOptions& options) {
  return fmt::format("{}|isa {:016x}|depth {} all {}|steps {} candidates {}{}{}", op.key,
                     isa.digest(), options.max_depth, options.all_depths, options.max_steps,
                     options.max_candidates, options.single_pass ? "|single pass" : "",
                     options.row_prefix ? "|row prefix" : "");
}

bool stationary_lhs(const ir::Kernel& k, int node) {
  const ir::Node& n = k.nodes[node];
  if (!is_matmul(n) || n.inputs.size() != 2) return false;
  const ir::Node& x = k.nodes[n.inputs[0]];
  if (x.op != "transpose" || x.shape.size() < 2 || !x.attrs.count("axes")) return false;
  const auto* axes = std::get_if<std::vector<sem::Dim>>(&x.attrs.at("axes"));
  if (!axes || axes->size() != x.shape.size()) return false;
  std::size_t r = axes->size();
  for (std::size_t d = 0; d < r; ++d) {
    std::size_t want = d + 2 < r ? d : d + 2 == r ? r - 1 : r - 2;
    if (!(*axes)[d].is_const() || (*axes)[d].value() != static_cast<std::int64_t>(want))
      return false;
  }
  return true;
}

std::vector<SynthesisQuery> synthesis_queries(const ir::Kernel& k, const sem::InstrTable& isa,
                                              const SynthesisOptions& options) {
  std::vector<SynthesisQuery> out;
  for (std::size_t i = 0; i < k.nodes.size(); ++i) {
    if (classify(k.nodes[i]) != OpClass::Compute || is_constant(k, static_cast<int>(i)) ||
        is_position(k, static_cast<int>(i)))
      continue;  // folded to a number, or computed inside the ops reading it
    SynthesisQuery q;
    q.node = static_cast<int>(i);
    q.op = tile_op(k, q.node, &q.why);
    q.options = options;
    out.push_back(std::move(q));
  }
  SynthesisOptions one = options, fused = options;
  one.max_depth = 1;
  fused.max_depth = 2;
  fused.all_depths = false;
  fused.single_pass = true;
  for (std::size_t c = 0; c < k.nodes.size(); ++c)
    for (int p : k.nodes[c].inputs)
      if (auto t = pair_tile_op(k, p, static_cast<int>(c)))
        out.push_back(
            SynthesisQuery{static_cast<int>(c), p, false, std::move(t), "", fused, {}, {}});
  for (const auto& site : swap_sites(k))
    out.push_back(SynthesisQuery{site.consumer, -1, true, transposed_use_op(), "", one, {}, {}});
  for (std::size_t i = 0; i < k.nodes.size(); ++i)
    if (stationary_lhs(k, static_cast<int>(i)))
      out.push_back(
          SynthesisQuery{static_cast<int>(i), -1, true, transposed_use_op(), "", one, {}, {}});
  // A region reading a per-row value may need it transformed first (exp(x - m): the bias is -m).
  // Its own budget (issue 17 item 7): the prefixes are searched for every such region, and
  // most have none (softmax's is found after 17,000 steps).
  SynthesisOptions prefixed = one;
  prefixed.max_depth = 2;
  prefixed.row_prefix = true;
  prefixed.max_steps = std::min<std::int64_t>(options.max_steps, 25000);
  for (auto& r : region_candidates(k, max_tile_operands(isa))) {
    const auto& params = r.op.kernel.params;
    bool per_row = std::any_of(params.begin(), params.end(), [](const ir::Param& p) {
      return p.shape.size() == 2 && p.shape[1].is_const() && p.shape[1].value() == 1;
    });
    out.push_back(SynthesisQuery{r.root, r.members.front(), false, std::move(r.op), "",
                                 per_row ? prefixed : one, std::move(r.members),
                                 std::move(r.operands)});
  }
  return out;
}

namespace {

// A swap site's producer with the transpose fused into each of its lowerings' root: nullopt
// when none of them splits, fuses and proves.
std::optional<FusedProducer> fuse_producer(int node, const SynthesisResult& r,
                                           const sem::InstrTable& isa, SynthesisCache& cache,
                                           const SynthesisOptions& one,
                                           verify::VerdictCache* verdicts,
                                           std::vector<std::string>& fusions) {
  FusedProducer f;
  f.node = node;
  static const TileOp target = transposed_matmul_op();
  for (const auto& l : r.lowerings) {
    auto split = split_at_root(l.program, isa);
    if (!split) continue;
    auto root_op = transposed_root_op(*split->root);
    if (!root_op) continue;
    const SynthesisResult& fused = cache.get(*root_op, isa, one, verdicts);
    if (fused.lowerings.empty()) continue;
    const Lowering& root = fused.lowerings.front();
    std::string fusion = fmt::format("transpose({}(a, b)) = {}", split->root->op.name, root.text);
    if (std::find(fusions.begin(), fusions.end(), fusion) == fusions.end())
      fusions.push_back(fusion);
    Lowering whole;
    whole.program = compose(split->pre, root.program);
    whole.text = ir::expression_text(whole.program);
    whole.depth = l.depth;
    whole.proof = verify::prove_equivalent(target.kernel, whole.program, one.prove, verdicts);
    if (!whole.proof.proved()) continue;
    f.fused.lowerings.push_back(std::move(whole));
    f.pre.push_back(std::move(split->pre));
    f.root.push_back(&root.program);
  }
  if (f.fused.lowerings.empty()) return std::nullopt;
  return f;
}

// The regions with a proved instruction that do not overlap: from the last root back, each
// root's largest region whose ops no region chosen and no pair holds. Appended to `pairs`.
void choose_regions(std::vector<PairChoice> regions, std::vector<PairChoice>& pairs) {
  std::set<int> used;
  for (const auto& p : pairs) used.insert(p.producer), used.insert(p.consumer);
  std::stable_sort(regions.begin(), regions.end(), [](const PairChoice& a, const PairChoice& b) {
    return a.consumer != b.consumer ? a.consumer > b.consumer
                                    : a.absorbed.size() > b.absorbed.size();
  });
  for (auto& r : regions) {
    bool free = !used.count(r.consumer);
    for (int m : r.absorbed) free = free && !used.count(m);
    if (!free) continue;
    used.insert(r.consumer);
    used.insert(r.absorbed.begin(), r.absorbed.end());
    pairs.push_back(std::move(r));
  }
}

}  // namespace

KernelChoices instruction_choices(const ir::Kernel& k, const sem::InstrTable& isa,
                                  SynthesisCache& cache, const SynthesisOptions& options,
                                  verify::VerdictCache* verdicts) {
  KernelChoices out;
  std::map<int, const SynthesisResult*> uses;  // per swap site consumer
  std::map<int, const SynthesisResult*> synthesized;
  std::vector<PairChoice> regions;
  for (auto& q : synthesis_queries(k, isa, options)) {
    const ir::Node& n = k.nodes[q.node];
    if (!q.region.empty()) {
      PairChoice rc;
      rc.producer = q.producer;
      rc.consumer = q.node;
      for (int m : q.region) rc.label += fmt::format("{}@{}+", k.nodes[m].op, k.nodes[m].loc.line);
      rc.label += fmt::format("{}@{}", n.op, n.loc.line);
      rc.synthesis = &cache.get(*q.op, isa, q.options, verdicts);
      rc.absorbed = std::move(q.region);
      rc.operands = std::move(q.operands);
      if (!rc.synthesis->lowerings.empty()) regions.push_back(std::move(rc));
      continue;
    }
    if (q.transposed_use) {
      uses[q.node] = &cache.get(*q.op, isa, q.options, verdicts);
      continue;
    }
    if (q.producer >= 0) {  // a fusable pair
      PairChoice pc;
      pc.producer = q.producer;
      pc.consumer = q.node;
      const ir::Node& p = k.nodes[q.producer];
      pc.label = fmt::format("{}@{}+{}@{}", p.op, p.loc.line, n.op, n.loc.line);
      pc.synthesis = &cache.get(*q.op, isa, q.options, verdicts);
      if (!pc.synthesis->lowerings.empty()) out.pairs.push_back(pc);
      continue;
    }
    OpChoices c;
    c.node = q.node;
    c.label = fmt::format("{}@{}", n.op, n.loc.line);
    if (q.op) {
      c.tile = ir::kernel_signature(q.op->kernel);
      c.synthesis = &cache.get(*q.op, isa, q.options, verdicts);
      synthesized[q.node] = c.synthesis;
      if (c.synthesis->lowerings.empty())
        ++out.unlowered;
      else
        out.combinations *= static_cast<double>(c.synthesis->lowerings.size());
    } else {
      c.note = q.why;
      ++out.unlowered;
    }
    out.ops.push_back(std::move(c));
  }
  choose_regions(std::move(regions), out.pairs);
  for (auto& c : out.ops)
    if (stationary_lhs(k, c.node) && uses.count(c.node) && !uses[c.node]->lowerings.empty())
      c.stationary = uses[c.node];
  SynthesisOptions one = options;
  one.max_depth = 1;
  for (const auto& site : swap_sites(k)) {
    SwapChoice sc;
    sc.site = site;
    sc.use = uses.at(site.consumer);
    bool ok = !sc.use->lowerings.empty();
    for (std::size_t i = 0; i < site.chain.size() && ok; ++i) {
      auto [a, b] = commute_kernels(k, site.chain[i]);
      sc.commutes.push_back(verify::prove_equivalent(a, b, options.prove, verdicts));
      ok = sc.commutes.back().proved();
    }
    for (std::size_t i = 0; i < site.producers.size() && ok; ++i) {
      auto it = synthesized.find(site.producers[i]);
      auto f = it == synthesized.end() ? std::nullopt
                                       : fuse_producer(site.producers[i], *it->second, isa, cache,
                                                       one, verdicts, sc.fusions);
      if (f) sc.producers.push_back(std::make_shared<const FusedProducer>(std::move(*f)));
      ok = f.has_value();
    }
    if (!ok) continue;
    const ir::Node& q = k.nodes[site.consumer];
    const ir::Node& h = k.nodes[q.inputs[0]];
    sc.label = fmt::format("{}@{} reads {}@{} transposed", q.op, q.loc.line, h.op, h.loc.line);
    out.swaps.push_back(std::move(sc));
  }
  out.splits = split_reductions(k, options.prove, verdicts);
  out.online = online_splits(k, options.prove, verdicts);
  // A scan's chunk step: one instruction (the scan from a given start), a small query each
  // process synthesizes itself.
  out.scans = chunked_scans(k, options.prove, verdicts);
  for (auto& sc : out.scans)
    if (auto step = chunk_tile_op(k, sc.node); step && sc.proved)
      sc.step = &cache.get(*step, isa, one, verdicts);
  return out;
}

}  // namespace ts::lower

#include "tilesweep/lower/instruction_choices.h"

#include <fmt/format.h>

#include "tilesweep/ir/graph_printer.h"

namespace ts::lower {

const SynthesisResult& SynthesisCache::get(const TileOp& op, const sem::InstrTable& isa,
                                           const SynthesisOptions& options, verify::VerdictCache* verdicts) {
  // The result depends on the ISA (targets differ: dma_transpose, engines) and the budgets as
  // much as on the op: all are in the key, or the order of calls would decide what a target gets.
  // The ISA by address: a cache lives in one process, as do the tables it is called with.
  const std::string key = fmt::format("{}|isa {}|depth {} all {}|steps {} candidates {}", op.key,
                                      static_cast<const void*>(&isa), options.max_depth, options.all_depths,
                                      options.max_steps, options.max_candidates);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = results_.find(key);
    if (it != results_.end()) {
      ++hits_;
      return it->second;
    }
  }
  SynthesisResult r = synthesize(op.kernel, isa, options, verdicts);  // outside the lock: slow
  std::lock_guard<std::mutex> lock(mu_);
  return results_.emplace(key, std::move(r)).first->second;
}

std::size_t SynthesisCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return results_.size();
}

std::size_t SynthesisCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

KernelChoices instruction_choices(const ir::Kernel& k, const sem::InstrTable& isa, SynthesisCache& cache,
                                  const SynthesisOptions& options, verify::VerdictCache* verdicts) {
  KernelChoices out;
  for (std::size_t i = 0; i < k.nodes.size(); ++i) {
    const ir::Node& n = k.nodes[i];
    if (classify(n) != OpClass::Compute || is_constant(k, static_cast<int>(i))) continue;
    OpChoices c;
    c.node = static_cast<int>(i);
    c.label = fmt::format("{}@{}", n.op, n.loc.line);
    std::string why;
    if (auto t = tile_op(k, c.node, &why)) {
      c.tile = ir::kernel_signature(t->kernel);
      c.synthesis = &cache.get(*t, isa, options, verdicts);
      if (c.synthesis->lowerings.empty()) ++out.unlowered;
      else out.combinations *= static_cast<double>(c.synthesis->lowerings.size());
    } else {
      c.note = why;
      ++out.unlowered;
    }
    out.ops.push_back(std::move(c));
  }
  SynthesisOptions one = options;
  one.max_depth = 1;
  for (std::size_t c = 0; c < k.nodes.size(); ++c)
    for (int p : k.nodes[c].inputs) {
      auto t = pair_tile_op(k, p, static_cast<int>(c));
      if (!t) continue;
      PairChoice pc;
      pc.producer = p;
      pc.consumer = static_cast<int>(c);
      pc.label = fmt::format("{}@{}+{}@{}", k.nodes[p].op, k.nodes[p].loc.line, k.nodes[c].op, k.nodes[c].loc.line);
      pc.synthesis = &cache.get(*t, isa, one, verdicts);
      if (!pc.synthesis->lowerings.empty()) out.pairs.push_back(pc);
    }
  return out;
}

}  // namespace ts::lower

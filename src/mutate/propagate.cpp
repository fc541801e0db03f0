#include "tilesweep/mutate/propagate.h"

#include <fmt/format.h>

#include <functional>
#include <set>

#include "permute.h"
#include "swap.h"
#include "tilesweep/ir/graph_edit.h"

namespace ts::mutate {

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::Saturated:
      return "saturated";
    case StopReason::VariantLimit:
      return "variant limit";
    case StopReason::CheckLimit:
      return "check limit";
  }
  return "?";
}

namespace {

std::string op_label(const ir::Node& n) { return fmt::format("{}@{}", n.op, n.loc.line); }

std::vector<std::vector<int>> subsets_of_size(int n, int k) {
  std::vector<std::vector<int>> out;
  std::vector<int> cur;
  std::function<void(int)> rec = [&](int start) {
    if (static_cast<int>(cur.size()) == k) {
      out.push_back(cur);
      return;
    }
    for (int i = start; i < n; ++i) {
      cur.push_back(i);
      rec(i + 1);
      cur.pop_back();
    }
  };
  rec(0);
  return out;
}

std::vector<int> users(const ir::Kernel& k, int id) {
  std::vector<int> out;
  for (std::size_t i = 0; i < k.nodes.size(); ++i)
    for (int in : k.nodes[i].inputs)
      if (in == id) {
        out.push_back(static_cast<int>(i));
        break;
      }
  return out;
}

std::vector<int> positions(const ir::Kernel& k, int origin) {
  std::vector<int> out;
  for (std::size_t i = 0; i < k.nodes.size(); ++i)
    if (k.nodes[i].origin == origin && k.nodes[i].param < 0) out.push_back(static_cast<int>(i));
  return out;
}

class Propagator {
 public:
  Propagator(const PropagateOptions& o, verify::VerdictCache* cache) : opts_(o), cache_(cache) {}

  VariantSet run(const ir::Kernel& k) {
    Variant v0;
    v0.kernel = ir::compact(k);
    v0.hash = ir::structural_hash(v0.kernel);
    v0.step = "original";
    seen_.insert(v0.hash);
    set_.variants.push_back(std::move(v0));
    std::vector<int> ops;
    for (const auto& n : set_.variants[0].kernel.nodes)
      if (n.param < 0 && !n.inputs.empty()) ops.push_back(n.origin);
    for (int op1 : ops) {
      std::size_t count = set_.variants.size();
      for (std::size_t g = 0; g < count && !stopped(); ++g)
        propagate_from(static_cast<int>(g), op1);
    }
    // Every variant the first round found, swapped: a rewrite and the layout compose (mamba's
    // (delta * u) * b computed once per C tile needs both).
    std::size_t found = set_.variants.size();
    for (std::size_t g = 0; g < found && !stopped(); ++g) swap_layout(static_cast<int>(g));
    return std::move(set_);
  }

 private:
  bool stopped() {
    if (static_cast<int>(set_.variants.size()) >= opts_.max_variants) {
      set_.stop = StopReason::VariantLimit;
      return true;
    }
    if (checks_ >= opts_.max_checks) {
      set_.stop = StopReason::CheckLimit;
      return true;
    }
    return false;
  }

  // Variant `g` with the leading dims of its rank-3 values swapped (permute.h), proved against
  // the original.
  void swap_layout(int g) {
    const ir::Kernel& k = set_.variants[0].kernel;
    std::optional<ir::Kernel> swapped = swap_leading_dims(set_.variants[g].kernel);
    if (!swapped) return;
    std::uint64_t h = ir::structural_hash(*swapped);
    if (seen_.count(h)) return;
    ++checks_;
    SwapProof proof;
    proof.op1 = "layout";
    proof.op2 = "dims 0 and 1 of rank-3 values swapped";
    proof.verdict = verify::prove_equivalent(k, *swapped, opts_.prove, cache_);
    set_.proof_ms += proof.verdict.ms;
    if (proof.verdict.proved()) {
      Variant v;
      v.kernel = std::move(*swapped);
      v.hash = h;
      v.parent = g;
      v.step = "layout: dims 0 and 1 of the rank-3 values swapped";
      seen_.insert(h);
      set_.variants.push_back(std::move(v));
      proof.to_variant = static_cast<int>(set_.variants.size()) - 1;
    }
    set_.proofs.push_back(std::move(proof));
  }

  void propagate_from(int g0, int op1) {
    std::vector<std::pair<int, int>> work;
    for (int p : positions(set_.variants[g0].kernel, op1)) work.emplace_back(g0, p);
    while (!work.empty() && !stopped()) {
      auto [g, pos] = work.back();
      work.pop_back();
      const ir::Kernel cur = set_.variants[g].kernel;  // copy: variants grows below
      for (int q : users(cur, pos)) {
        int n_inputs = static_cast<int>(cur.nodes[pos].inputs.size());
        bool accepted = false;
        for (int degree = 1; degree <= n_inputs && !accepted && !stopped(); ++degree) {
          for (const auto& s : subsets_of_size(n_inputs, degree)) {
            if (stopped()) break;
            auto sw = swap_with_successor(cur, pos, q, s);
            if (!sw) continue;
            std::uint64_t h = ir::structural_hash(sw->graph);
            if (seen_.count(h)) {
              accepted = true;  // already a variant, reached another way
              continue;
            }
            ++checks_;
            SwapProof proof;
            proof.from_variant = g;
            proof.op1 = op_label(cur.nodes[pos]);
            proof.op2 = op_label(cur.nodes[q]);
            proof.clone_degree = degree;
            proof.verdict = verify::prove_equivalent(sw->before, sw->after, opts_.prove, cache_);
            set_.proof_ms += proof.verdict.ms;
            if (proof.verdict.proved()) {
              Variant v;
              v.kernel = std::move(sw->graph);
              v.hash = h;
              v.parent = g;
              v.step = fmt::format("{} past {} (clone degree {})", proof.op1, proof.op2, degree);
              seen_.insert(h);
              set_.variants.push_back(std::move(v));
              int id = static_cast<int>(set_.variants.size()) - 1;
              proof.to_variant = id;
              for (int p : positions(set_.variants[id].kernel, op1)) work.emplace_back(id, p);
              accepted = true;
            }
            set_.proofs.push_back(std::move(proof));
          }
        }
      }
    }
  }

  PropagateOptions opts_;
  verify::VerdictCache* cache_;
  VariantSet set_;
  std::set<std::uint64_t> seen_;
  int checks_ = 0;
};

}  // namespace

VariantSet propagate(const ir::Kernel& k, const PropagateOptions& options,
                     verify::VerdictCache* cache) {
  return Propagator(options, cache).run(k);
}

}  // namespace ts::mutate

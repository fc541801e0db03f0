#include "tilesweep/sweep/check.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <tuple>

#include "tilesweep/ir/interpreter.h"
#include "tilesweep/sim/execute.h"
#include "tilesweep/sweep/unit_work.h"

namespace ts::sweep {

std::vector<ir::Tensor> check_inputs(const ir::Kernel& k, const sem::DimEnv& dims,
                                     std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(0.1, 1.0);
  std::vector<ir::Tensor> in;
  for (const auto& p : k.params) {
    ir::Tensor t(ir::concrete_shape(p.shape, dims));
    for (auto& x : t.data) x = p.scalar && p.default_value ? *p.default_value : uni(rng);
    in.push_back(std::move(t));
  }
  return in;
}

namespace {

bool agrees(const std::vector<ir::Tensor>& got, const std::vector<ir::Tensor>& want) {
  if (got.size() != want.size()) return false;
  for (std::size_t o = 0; o < got.size(); ++o) {
    if (got[o].shape != want[o].shape) return false;
    for (std::int64_t e = 0; e < want[o].size(); ++e)
      if (!(std::abs(got[o].data[e] - want[o].data[e]) <= 1e-4 + 1e-4 * std::abs(want[o].data[e])))
        return false;
  }
  return true;
}

}  // namespace

CheckCounts check_candidates(const Plan& plan, std::vector<store::CandidateRecord>& rows,
                             std::int64_t samples, std::uint64_t seed) {
  CheckCounts counts;
  if (samples <= 0) return counts;
  auto key = [](const std::string& kernel, const std::string& target, const std::string& shape,
                const std::string& mesh, const std::string& sharding) {
    return std::tuple(kernel, target, shape, mesh, sharding);
  };
  std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>,
           const SpaceEntry*>
      spaces;
  for (const auto& e : plan.spaces())
    spaces[key(e.label, e.target_name, e.shape_name, e.setting.mesh, e.setting.sharding)] = &e;
  // Per /best key (kernel, target, shape, mesh): its feasible rows, best first.
  std::map<std::tuple<std::string, std::string, std::string, std::string>,
           std::vector<store::CandidateRecord*>>
      by_key;
  for (auto& r : rows)
    if (r.feasible && !is_summary(r))
      by_key[std::tuple(r.kernel, r.target, r.shape, r.mesh)].push_back(&r);
  for (auto& [k, list] : by_key) {
    std::stable_sort(list.begin(), list.end(), [](const auto* a, const auto* b) {
      return std::tie(a->latency_ns, a->index) < std::tie(b->latency_ns, b->index);
    });
    if (static_cast<std::int64_t>(list.size()) > samples)
      list.resize(static_cast<std::size_t>(samples));
    // The reference per space (a sharding's local shape differs), computed once.
    std::map<const SpaceEntry*, std::pair<std::vector<ir::Tensor>, std::vector<ir::Tensor>>> refs;
    for (store::CandidateRecord* r : list) {
      auto it = spaces.find(key(r->kernel, r->target, r->shape, r->mesh, r->sharding));
      if (it == spaces.end()) continue;
      const SpaceEntry& e = *it->second;
      auto ref = refs.find(&e);
      if (ref == refs.end()) {
        const ir::Kernel& kernel = e.prepared->variants.variants[0].kernel;
        auto in = check_inputs(kernel, e.dims, seed);
        auto want = ir::evaluate(kernel, e.dims, in, ir::Precision::F64);
        ref = refs.emplace(&e, std::pair(std::move(in), std::move(want))).first;
      }
      bool ok = agrees(sim::execute(e.space->materialize(r->index).value(), ref->second.first),
                       ref->second.second);
      r->check = ok ? 1 : 0;
      ++(ok ? counts.passed : counts.failed);
    }
  }
  return counts;
}

}  // namespace ts::sweep

#include "witness.h"

#include <cmath>
#include <random>
#include <set>

#include "tilesweep/ir/interpreter.h"

namespace ts::verify {

namespace {

constexpr std::int64_t kMaxElements = 1 << 16;

bool fits(const ir::Kernel& k, const sem::DimEnv& env) {
  for (const auto& p : k.preconditions) {
    auto ok = p.holds(env);
    if (!ok || !*ok) return false;
  }
  for (const auto& n : k.nodes) {
    std::int64_t count = 1;
    for (const auto& d : n.shape) {
      auto v = d.evaluate(env);
      if (!v || *v < 0) return false;
      count *= *v;
    }
    if (count > kMaxElements) return false;
  }
  return true;
}

std::optional<Counterexample> compare(const ir::Kernel& a, const ir::Kernel& b, const sem::DimEnv& env,
                                      std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::vector<ir::Tensor> inputs;
  for (const auto& p : a.params) {
    ir::Tensor t(ir::concrete_shape(p.shape, env));
    for (double& v : t.data) v = uni(rng);
    inputs.push_back(std::move(t));
  }
  std::vector<ir::Tensor> x = ir::evaluate(a, env, inputs, ir::Precision::F64);
  std::vector<ir::Tensor> y = ir::evaluate(b, env, inputs, ir::Precision::F64);
  for (std::size_t o = 0; o < x.size() && o < y.size(); ++o) {
    if (x[o].shape != y[o].shape) {
      Counterexample c;
      c.dims = env;
      c.output = static_cast<int>(o);
      c.note = "output " + std::to_string(o) + " has shape " + x[o].shape_str() + " vs " + y[o].shape_str();
      return c;
    }
    for (std::int64_t e = 0; e < x[o].size(); ++e) {
      double p = x[o].data[e], q = y[o].data[e];
      if (!std::isfinite(p) || !std::isfinite(q)) continue;
      if (std::fabs(p - q) <= 1e-7 + 1e-7 * std::max(std::fabs(p), std::fabs(q))) continue;
      Counterexample c;
      c.dims = env;
      c.output = static_cast<int>(o);
      c.lhs = p;
      c.rhs = q;
      std::int64_t rest = e;
      c.index.assign(x[o].shape.size(), 0);
      for (int d = static_cast<int>(x[o].shape.size()) - 1; d >= 0; --d) {
        c.index[d] = rest % x[o].shape[d];
        rest /= x[o].shape[d];
      }
      return c;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<Counterexample> find_witness(const ir::Kernel& a, const ir::Kernel& b,
                                           const std::optional<sem::DimEnv>& hint) {
  std::set<std::string> names(a.dims.begin(), a.dims.end());
  names.insert(b.dims.begin(), b.dims.end());
  std::vector<sem::DimEnv> trials;
  if (hint) trials.push_back(*hint);
  for (std::int64_t base : {2, 3, 4, 1, 5, 6}) {
    sem::DimEnv env;
    std::int64_t step = 0;
    for (const auto& n : names) env[n] = base + (step++ % 2);  // unequal dims expose mix-ups
    trials.push_back(env);
    sem::DimEnv flat;
    for (const auto& n : names) flat[n] = base;
    trials.push_back(flat);
  }
  for (const auto& env : trials) {
    bool complete = true;
    for (const auto& n : names) complete = complete && env.count(n);
    if (!complete || !fits(a, env) || !fits(b, env)) continue;
    for (std::uint64_t seed = 1; seed <= 3; ++seed)
      if (auto c = compare(a, b, env, seed)) return c;
  }
  return std::nullopt;
}

}  // namespace ts::verify

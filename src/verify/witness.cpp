#include "witness.h"

#include <cmath>
#include <random>
#include <set>

#include "tilesweep/ir/interpreter.h"

namespace ts::verify {

namespace {

constexpr std::int64_t kMaxElements = 1 << 16;
// float64's unit roundoff over float32's: how much smaller float64 rounding is.
constexpr double kF64OverF32 = 1.0 / (1 << 29);
constexpr double kEps64 = 2.220446049250313e-16;

enum class Fill { Uniform, SmallIntegers, Zeros };

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

std::vector<ir::Tensor> inputs_for(const ir::Kernel& a, const sem::DimEnv& env, Fill fill,
                                   std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::uniform_int_distribution<int> small(-2, 2);
  std::vector<ir::Tensor> inputs;
  for (const auto& p : a.params) {
    ir::Tensor t(ir::concrete_shape(p.shape, env));
    for (double& v : t.data)
      v = fill == Fill::Uniform ? uni(rng) : fill == Fill::SmallIntegers ? small(rng) : 0.0;
    inputs.push_back(std::move(t));
  }
  return inputs;
}

// Both kernels' outputs at one precision; b reads a's inputs through `b_positions`.
struct Run {
  std::vector<ir::Tensor> x, y;
};

Run run(const ir::Kernel& a, const ir::Kernel& b, const std::vector<int>& b_positions,
        const sem::DimEnv& env, const std::vector<ir::Tensor>& inputs, ir::Precision precision) {
  std::vector<ir::Tensor> for_b;
  for (int p : b_positions) for_b.push_back(inputs[p]);
  return Run{ir::evaluate(a, env, inputs, precision), ir::evaluate(b, env, for_b, precision)};
}

// A difference no rounding explains: definedness differs (in both precisions), or the values
// differ by far more than either side's rounding error, estimated as its float32 error scaled
// to float64.
bool beyond_rounding(double p, double q, double p32, double q32) {
  bool fp = std::isfinite(p), fq = std::isfinite(q);
  if (!fp && !fq) return false;
  if (fp != fq) return std::isfinite(p32) == fp && std::isfinite(q32) == fq;
  double diff = std::fabs(p - q);
  if (diff <= 1e-7 * (1 + std::max(std::fabs(p), std::fabs(q)))) return false;
  if (!std::isfinite(p32) || !std::isfinite(q32)) return false;
  double rounding = (std::fabs(p32 - p) + std::fabs(q32 - q)) * kF64OverF32 +
                    8 * kEps64 * (std::fabs(p) + std::fabs(q));
  return diff > 1e4 * rounding;
}

std::optional<Counterexample> compare(const Run& f64, const Run& f32, const sem::DimEnv& env) {
  for (std::size_t o = 0; o < f64.x.size() && o < f64.y.size(); ++o) {
    const ir::Tensor &x = f64.x[o], &y = f64.y[o];
    Counterexample c;
    c.dims = env;
    c.output = static_cast<int>(o);
    if (x.shape != y.shape) {
      c.note =
          "output " + std::to_string(o) + " has shape " + x.shape_str() + " vs " + y.shape_str();
      return c;
    }
    for (std::int64_t e = 0; e < x.size(); ++e) {
      if (!beyond_rounding(x.data[e], y.data[e], f32.x[o].data[e], f32.y[o].data[e])) continue;
      c.lhs = x.data[e];
      c.rhs = y.data[e];
      std::int64_t rest = e;
      c.index.assign(x.shape.size(), 0);
      for (int d = static_cast<int>(x.shape.size()) - 1; d >= 0; --d) {
        c.index[d] = rest % x.shape[d];
        rest /= x.shape[d];
      }
      return c;
    }
  }
  return std::nullopt;
}

std::vector<sem::DimEnv> trial_dims(const ir::Kernel& a, const ir::Kernel& b,
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
  std::vector<sem::DimEnv> out;
  for (const auto& env : trials) {
    bool complete = true;
    for (const auto& n : names) complete = complete && env.count(n);
    if (complete && fits(a, env) && fits(b, env)) out.push_back(env);
  }
  return out;
}

}  // namespace

std::optional<Counterexample> find_witness(const ir::Kernel& a, const ir::Kernel& b,
                                           const std::vector<int>& b_positions,
                                           const std::optional<sem::DimEnv>& hint) {
  struct Trial {
    Fill fill;
    std::uint64_t seed;
  };
  const Trial fills[] = {{Fill::Uniform, 1},
                         {Fill::Uniform, 2},
                         {Fill::Uniform, 3},
                         {Fill::SmallIntegers, 4},
                         {Fill::Zeros, 0}};
  for (const auto& env : trial_dims(a, b, hint)) {
    for (const auto& t : fills) {
      std::vector<ir::Tensor> inputs = inputs_for(a, env, t.fill, t.seed);
      Run f64 = run(a, b, b_positions, env, inputs, ir::Precision::F64);
      if (!compare(f64, f64, env)) continue;  // no difference at all: no float32 run needed
      Run f32 = run(a, b, b_positions, env, inputs, ir::Precision::F32);
      if (auto c = compare(f64, f32, env)) return c;
    }
  }
  return std::nullopt;
}

}  // namespace ts::verify

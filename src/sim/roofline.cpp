#include "tilesweep/sim/roofline.h"

#include <algorithm>
#include <bit>
#include <map>
#include <set>

#include "tilesweep/sim/attainable.h"
#include "tilesweep/sim/cores.h"

namespace ts::sim {

namespace {

double value(const sem::Dim& d, const sem::DimEnv& dims, const std::string& kernel) {
  auto v = d.evaluate(dims);
  if (!v)
    throw UserError(
        fmt::format("error: the roofline of kernel '{}' needs a value for '{}'", kernel, d.str()));
  return static_cast<double>(*v);
}

double elements(const std::vector<sem::Dim>& shape, const sem::DimEnv& dims,
                const std::string& kernel) {
  double n = 1;
  for (const auto& d : shape) n *= value(d, dims, kernel);
  return n;
}

std::optional<std::int64_t> axis_attr(const ir::Node& n, const std::string& name,
                                      std::size_t rank) {
  auto it = n.attrs.find(name);
  if (it == n.attrs.end()) return std::nullopt;
  std::int64_t x = 0;
  if (auto* i = std::get_if<std::int64_t>(&it->second))
    x = *i;
  else if (auto* d = std::get_if<sem::Dim>(&it->second); d && d->is_const())
    x = d->value();
  else
    return std::nullopt;
  return x < 0 ? x + static_cast<std::int64_t>(rank) : x;
}

// The position of item `name` of an operand pattern in a shape of rank `rank`, if it is there.
std::optional<std::size_t> position(const ir::Node& n, const sem::Pattern& pat,
                                    const std::string& name, std::size_t rank) {
  bool after_group = false;
  for (std::size_t i = 0; i < pat.items.size(); ++i) {
    const sem::Item& it = pat.items[i];
    if (it.group) {
      after_group = true;
      continue;
    }
    if (it.name != name) continue;
    if (!it.position.empty()) {
      auto a = axis_attr(n, it.position, rank);
      if (!a || *a < 0 || *a >= static_cast<std::int64_t>(rank)) return std::nullopt;
      return static_cast<std::size_t>(*a);
    }
    if (!after_group) return i < rank ? std::optional(i) : std::nullopt;
    std::size_t from_end = pat.items.size() - i;
    return from_end <= rank ? std::optional(rank - from_end) : std::nullopt;
  }
  return std::nullopt;
}

// Contracted extent of a node, and how many operands carry its contracted dims.
std::pair<double, int> contraction(const ir::Kernel& k, const ir::Node& n,
                                   const sem::DimEnv& dims) {
  double extent = 1;
  std::set<std::size_t> carriers;
  for (const auto& c : n.spec->contract) {
    bool found = false;
    for (std::size_t op = 0; op < n.inputs.size() && op < n.spec->shapes.size(); ++op) {
      const auto& shape = k.nodes[n.inputs[op]].shape;
      auto pos = position(n, n.spec->shapes[op], c, shape.size());
      if (!pos) continue;
      carriers.insert(op);
      if (!found) extent *= value(shape[*pos], dims, k.name);
      found = true;
    }
  }
  return {extent, static_cast<int>(carriers.size())};
}

bool has_select(const sem::Expr& e) {
  if (e.kind == sem::Expr::Call && e.name == "select") return true;
  for (const auto& a : e.args)
    if (has_select(*a)) return true;
  return e.bound && has_select(*e.bound);
}

bool no_flops(const ir::Node& n) {
  static const std::set<std::string> layout{"input",   "const",        "dim",    "transpose",
                                            "reshape", "broadcast_to", "concat", "repeat",
                                            "slice",   "copy"};
  return n.spec == nullptr || layout.count(n.op) > 0;
}

// The element engines' time for the scarce operations of `k` (attainable.h), one core: each
// element of a compute node that depends on an input and applies scarce operation c needs that
// many results of c, which only the engines whose instructions compute c give, each at most at
// its best rate. For every set S of those engines, the operations only S computes take at least
// their results over S's best rate, shared by |S| engines: the largest such time over the sets.
// 0 where the kernel masks (a `select` in a compute op: masked tiles are skipped,
// lower/materialize/masked_tiles.cpp) or slices (a slice may read part of what it slices).
double scarce_ns(const ir::Kernel& k, const sem::DimEnv& dims, const AttainablePeaks& peaks) {
  std::map<std::string, double> needed;
  std::vector<bool> live(k.nodes.size(), false);
  for (std::size_t i = 0; i < k.nodes.size(); ++i) {
    const ir::Node& n = k.nodes[i];
    if (n.op == "input") live[i] = true;
    for (int in : n.inputs) live[i] = live[i] || live[in];
    if (n.op == "slice") return 0;
    if (no_flops(n) || !n.spec->expr) continue;
    ScarceOps ops = scarce_operations(*n.spec->expr, [&](const std::string& attr) {
      std::vector<const sem::OpSpec*> applied;
      auto it = n.attrs.find(attr);
      if (it != n.attrs.end())
        if (const auto* name = std::get_if<std::string>(&it->second))
          applied.push_back(sem::OpTable::builtin().find(*name));
      return applied;
    });
    if (has_select(*n.spec->expr)) return 0;
    if (!live[i]) continue;
    double out = elements(n.shape, dims, k.name);
    for (const auto& [name, count] : ops) needed[name] += out * count;
  }
  std::vector<sem::Engine> engines;
  for (const auto& [name, count] : needed) {
    auto rates = peaks.scarce_per_s.find(name);
    if (rates == peaks.scarce_per_s.end()) continue;
    for (const auto& [e, rate] : rates->second)
      if (rate > 0 && std::find(engines.begin(), engines.end(), e) == engines.end())
        engines.push_back(e);
  }
  double best = 0;
  for (unsigned set = 1; set < (1u << engines.size()); ++set) {
    double seconds = 0;
    for (const auto& [name, count] : needed) {
      auto rates = peaks.scarce_per_s.find(name);
      if (rates == peaks.scarce_per_s.end()) continue;
      bool inside = true;
      double rate = 0;
      for (std::size_t e = 0; e < engines.size(); ++e) {
        auto r = rates->second.find(engines[e]);
        if (r == rates->second.end() || r->second <= 0) continue;
        if (set & (1u << e))
          rate = std::max(rate, r->second);
        else
          inside = false;
      }
      if (inside && rate > 0) seconds += count / rate;
    }
    best = std::max(best, seconds / std::popcount(set));
  }
  return best * 1e9;
}

// The compute a kernel as written asks for: FLOPs, and its contractions' time on one core at the
// published and at the attainable matmul peaks.
struct Work {
  double other_flops = 0, matmul_flops = 0;
  double matmul_ns = 0, attainable_matmul_ns = 0;
};

Work work(const ir::Kernel& k, const sem::DimEnv& dims, const target::Target& t,
          const AttainablePeaks& peaks) {
  Work w;
  for (const auto& n : k.nodes) {
    if (no_flops(n)) continue;
    double out = elements(n.shape, dims, k.name);
    if (n.spec->contract.empty()) {
      w.other_flops += out;
      continue;
    }
    auto [extent, carriers] = contraction(k, n, dims);
    if (carriers < 2) {
      w.other_flops += out * extent;
      continue;
    }
    bool fp32 = std::any_of(n.inputs.begin(), n.inputs.end(),
                            [&](int i) { return k.nodes[i].dtype == ir::DType::F32; });
    double flops = 2 * out * extent;
    w.matmul_flops += flops;
    w.matmul_ns +=
        flops / (fp32 ? t.roofline.matmul_flops_fp32 : t.roofline.matmul_flops_bf16) * 1e9;
    w.attainable_matmul_ns +=
        flops / (fp32 ? peaks.matmul_flops_fp32 : peaks.matmul_flops_bf16) * 1e9;
  }
  return w;
}

}  // namespace

void Roofline::spread_over(double d) {
  for (double* x : {&memory_ns, &matmul_ns, &other_ns, &bound_ns, &attainable_memory_ns,
                    &attainable_matmul_ns, &attainable_other_ns, &attainable_ns})
    *x /= d;
}

Roofline roofline(const ir::Kernel& k, const sem::DimEnv& dims, const target::Target& t, int cores,
                  const std::vector<const ir::Kernel*>& variants) {
  const AttainablePeaks& peaks = attainable_peaks(t);
  const double c = std::max(1, cores);
  Roofline r;
  for (const auto& p : k.params)
    if (!p.scalar) r.traffic_bytes += elements(p.shape, dims, k.name) * ir::dtype_bytes(p.dtype);
  for (int o : k.outputs)
    r.traffic_bytes += elements(k.nodes[o].shape, dims, k.name) * ir::dtype_bytes(k.nodes[o].dtype);
  Work w = work(k, dims, t, peaks);
  r.other_flops = w.other_flops;
  r.matmul_flops = w.matmul_flops;
  r.matmul_ns = w.matmul_ns / c;
  // Several cores: the per-core peaks times the cores, their traffic capped by the HBM stacks
  // they touch (cores.h).
  const double hbm = hbm_bytes_per_s_per_core(t, cores) * c;
  r.memory_ns = r.traffic_bytes /
                std::min(c * t.roofline.hbm_bytes_per_s, c > 1 ? hbm : t.roofline.hbm_bytes_per_s) *
                1e9;
  r.other_ns = r.other_flops / (c * t.roofline.vector_flops) * 1e9;
  r.bound_ns = std::max({r.memory_ns, r.matmul_ns, r.other_ns});
  r.attainable_memory_ns = r.traffic_bytes / std::min(c * peaks.dma_bytes_per_s, hbm) * 1e9;
  // The attainable terms of compute: the least over the kernel and its variants (a candidate of
  // any of them is bounded by its own: a rewrite can need fewer operations than `k` as written,
  // e.g. mamba's (delta * u) * b), over the cores.
  double other_flops = w.other_flops, matmul_ns = w.attainable_matmul_ns;
  for (const ir::Kernel* v : variants) {
    Work vw = work(*v, dims, t, peaks);
    other_flops = std::min(other_flops, vw.other_flops);
    matmul_ns = std::min(matmul_ns, vw.attainable_matmul_ns);
  }
  r.attainable_matmul_ns = matmul_ns / c;
  r.attainable_other_ns = other_flops / (c * peaks.element_ops_per_s) * 1e9;
  double scarce = scarce_ns(k, dims, peaks);
  for (const ir::Kernel* v : variants) scarce = std::min(scarce, scarce_ns(*v, dims, peaks));
  r.attainable_scarce_ns = scarce / c;
  r.attainable_other_ns = std::max(r.attainable_other_ns, r.attainable_scarce_ns);
  r.attainable_ns =
      std::max({r.attainable_memory_ns, r.attainable_matmul_ns, r.attainable_other_ns});
  return r;
}

}  // namespace ts::sim

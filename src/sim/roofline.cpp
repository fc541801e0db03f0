#include "tilesweep/sim/roofline.h"

#include <algorithm>
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

bool no_flops(const ir::Node& n) {
  static const std::set<std::string> layout{"input",   "const",        "dim",    "transpose",
                                            "reshape", "broadcast_to", "concat", "repeat",
                                            "slice",   "copy"};
  return n.spec == nullptr || layout.count(n.op) > 0;
}

}  // namespace

void Roofline::spread_over(double d) {
  for (double* x : {&memory_ns, &matmul_ns, &other_ns, &bound_ns, &attainable_memory_ns,
                    &attainable_matmul_ns, &attainable_other_ns, &attainable_ns})
    *x /= d;
}

Roofline roofline(const ir::Kernel& k, const sem::DimEnv& dims, const target::Target& t,
                  int cores) {
  const AttainablePeaks& peaks = attainable_peaks(t);
  const double c = std::max(1, cores);
  Roofline r;
  for (const auto& p : k.params)
    if (!p.scalar) r.traffic_bytes += elements(p.shape, dims, k.name) * ir::dtype_bytes(p.dtype);
  for (int o : k.outputs)
    r.traffic_bytes += elements(k.nodes[o].shape, dims, k.name) * ir::dtype_bytes(k.nodes[o].dtype);
  for (const auto& n : k.nodes) {
    if (no_flops(n)) continue;
    double out = elements(n.shape, dims, k.name);
    if (n.spec->contract.empty()) {
      r.other_flops += out;
      continue;
    }
    auto [extent, carriers] = contraction(k, n, dims);
    if (carriers < 2) {
      r.other_flops += out * extent;
      continue;
    }
    bool fp32 = std::any_of(n.inputs.begin(), n.inputs.end(),
                            [&](int i) { return k.nodes[i].dtype == ir::DType::F32; });
    double flops = 2 * out * extent;
    r.matmul_flops += flops;
    r.matmul_ns +=
        flops / (c * (fp32 ? t.roofline.matmul_flops_fp32 : t.roofline.matmul_flops_bf16)) * 1e9;
    r.attainable_matmul_ns +=
        flops / (c * (fp32 ? peaks.matmul_flops_fp32 : peaks.matmul_flops_bf16)) * 1e9;
  }
  // Several cores: the per-core peaks times the cores, their traffic capped by the HBM stacks
  // they touch (cores.h).
  const double hbm = hbm_bytes_per_s_per_core(t, cores) * c;
  r.memory_ns = r.traffic_bytes /
                std::min(c * t.roofline.hbm_bytes_per_s, c > 1 ? hbm : t.roofline.hbm_bytes_per_s) *
                1e9;
  r.other_ns = r.other_flops / (c * t.roofline.vector_flops) * 1e9;
  r.bound_ns = std::max({r.memory_ns, r.matmul_ns, r.other_ns});
  r.attainable_memory_ns = r.traffic_bytes / std::min(c * peaks.dma_bytes_per_s, hbm) * 1e9;
  r.attainable_other_ns = r.other_flops / (c * peaks.element_ops_per_s) * 1e9;
  r.attainable_ns =
      std::max({r.attainable_memory_ns, r.attainable_matmul_ns, r.attainable_other_ns});
  return r;
}

}  // namespace ts::sim

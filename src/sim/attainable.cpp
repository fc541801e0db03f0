#include "tilesweep/sim/attainable.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>

#include "tilesweep/target/instr_cost.h"

namespace ts::sim {

namespace {

// The sizes each named pattern dim of an instruction takes: powers of two up to its limit
// (or up to 512 where it has none), the largest first.
using DimSizes = std::map<std::string, std::vector<std::int64_t>>;

DimSizes dim_sizes(const sem::InstrSpec& in) {
  DimSizes sizes;
  auto add = [&](const sem::Pattern& p) {
    for (const auto& item : p.items) {
      if (item.group || item.name.empty() || sizes.count(item.name)) continue;
      auto it = in.limits.find(item.name);
      std::int64_t limit = it == in.limits.end() ? 512 : it->second;
      auto& v = sizes[item.name];
      for (std::int64_t s = limit; s >= 1; s /= 2) v.push_back(s);
    }
  };
  for (const auto& s : in.op.shapes) add(s);
  add(in.op.out);
  return sizes;
}

// A pattern's concrete shape at `env`; nullopt for a group or an item it cannot size.
std::optional<target::TileShape> concrete(const sem::Pattern& p,
                                          const std::map<std::string, std::int64_t>& env) {
  target::TileShape shape;
  for (const auto& item : p.items) {
    if (item.group) return std::nullopt;
    if (!item.name.empty()) {
      auto it = env.find(item.name);
      if (it == env.end()) return std::nullopt;
      shape.push_back(it->second);
    } else if (item.expr && item.expr->kind == sem::Expr::Number) {
      shape.push_back(static_cast<std::int64_t>(item.expr->number));
    } else {
      return std::nullopt;
    }
  }
  return shape;
}

double elements(const target::TileShape& s) {
  double n = 1;
  for (auto d : s) n *= static_cast<double>(d);
  return n;
}

// Calls `visit(operand shapes, out shape, env)` for every combination of the dims' sizes (at most
// a few thousand: every formula is cheap).
template <class Visit>
void each_size(const sem::InstrSpec& in, Visit visit) {
  DimSizes sizes = dim_sizes(in);
  std::vector<std::pair<std::string, const std::vector<std::int64_t>*>> dims;
  for (const auto& [name, v] : sizes) dims.emplace_back(name, &v);
  std::vector<std::size_t> at(dims.size(), 0);
  std::map<std::string, std::int64_t> env;
  for (int visited = 0; visited < 5000; ++visited) {
    for (std::size_t d = 0; d < dims.size(); ++d) env[dims[d].first] = (*dims[d].second)[at[d]];
    std::vector<target::TileShape> operands;
    bool ok = true;
    for (const auto& s : in.op.shapes) {
      auto shape = concrete(s, env);
      ok = ok && shape.has_value();
      if (shape) operands.push_back(*shape);
    }
    auto out = concrete(in.op.out, env);
    if (ok && out) visit(operands, *out, env);
    std::size_t d = 0;
    while (d < dims.size() && ++at[d] == dims[d].second->size()) at[d++] = 0;
    if (d == dims.size()) return;
  }
}

// Cycles of one issue of `in` on these tiles: its formula at the faster of its operands' memory
// cases (`psum_sbuf`), times the copies over its limits.
double cycles(const target::Target& t, const sem::InstrSpec& in,
              const std::vector<target::TileShape>& operands, const target::TileShape& out,
              ir::DType dtype) {
  target::InstrVars v = instr_vars(t, in, operands, out, dtype);
  double general = target::formula_value(in, v.vars);
  v.vars.set("psum_sbuf", 1);
  return std::min(general, target::formula_value(in, v.vars)) * v.repeat;
}

// Data operations one element of the result costs in `e`: arithmetic, calls and reductions
// with a tensor element below them (an operand, bare or indexed; index arithmetic, attributes
// and immediates do not count).
std::pair<int, bool> data_ops(const sem::Expr& e, const sem::OpSpec& op) {
  if (e.kind == sem::Expr::Access) return {0, true};
  if (e.kind == sem::Expr::Name) return {0, op.operand_index(e.name) >= 0};
  int ops = 0;
  bool data = false;
  for (const auto& a : e.args) {
    auto [n, d] = data_ops(*a, op);
    ops += n;
    data = data || d;
  }
  bool arithmetic =
      e.kind == sem::Expr::Neg || e.kind == sem::Expr::Call || e.kind == sem::Expr::Reduce ||
      (e.kind == sem::Expr::Binary && (e.op == sem::BinOp::Add || e.op == sem::BinOp::Sub ||
                                       e.op == sem::BinOp::Mul || e.op == sem::BinOp::Div));
  return {ops + (data && arithmetic ? 1 : 0), data};
}

bool on(const sem::InstrSpec& in, sem::Engine e) {
  return std::find(in.engines.begin(), in.engines.end(), e) != in.engines.end();
}

// The Tensor engine's FLOP/s at its best contraction, for fp32 or bf16 operands.
double matmul_peak(const target::Target& t, const sem::InstrSpec& in, ir::DType dtype) {
  double best = 0;
  each_size(in, [&](const std::vector<target::TileShape>& ops, const target::TileShape& out,
                    const std::map<std::string, std::int64_t>& env) {
    double flops = 2 * elements(out);
    for (const auto& c : in.op.contract) flops *= static_cast<double>(env.at(c));
    double c = cycles(t, in, ops, out, dtype);
    if (c > 0) best = std::max(best, flops / c * t.engines.at(sem::Engine::Tensor).clock_hz);
  });
  return best;
}

// Elements per cycle of an element-wise (or reducing) instruction at its best tile: the larger
// of what it reads and writes.
double elements_per_cycle(const target::Target& t, const sem::InstrSpec& in) {
  double best = 0;
  each_size(in, [&](const std::vector<target::TileShape>& ops, const target::TileShape& out,
                    const std::map<std::string, std::int64_t>&) {
    double n = elements(out);
    for (const auto& s : ops) n = std::max(n, elements(s));
    double c =
        std::min(cycles(t, in, ops, out, ir::DType::F32), cycles(t, in, ops, out, ir::DType::BF16));
    if (c > 0) best = std::max(best, n / c);
  });
  return best;
}

void add_max(ScarceOps& into, const ScarceOps& from) {
  for (const auto& [name, n] : from) into[name] = std::max(into[name], n);
}

void count_scarce(const sem::Expr& e,
                  const std::function<std::vector<const sem::OpSpec*>(const std::string&)>& applied,
                  ScarceOps& out) {
  static const std::set<std::string> functions{"tanh", "sin", "cos", "sqrt"};
  std::size_t first = 0;
  if (e.kind == sem::Expr::Call && e.name == "apply" && !e.args.empty() &&
      e.args[0]->kind == sem::Expr::Name) {
    ScarceOps most;
    for (const sem::OpSpec* op : applied(e.args[0]->name))
      if (op && op->expr) add_max(most, scarce_operations(*op->expr, applied));
    for (const auto& [name, n] : most) out[name] += n;
    first = 1;
  } else if (e.kind == sem::Expr::Call && functions.count(e.name)) {
    ++out[e.name];
  } else if (e.kind == sem::Expr::Reduce && e.reducer == sem::Reducer::Prod && e.bound) {
    ++out["range product"];
  }
  for (std::size_t i = first; i < e.args.size(); ++i) count_scarce(*e.args[i], applied, out);
  if (e.bound) count_scarce(*e.bound, applied, out);
}

}  // namespace

ScarceOps scarce_operations(
    const sem::Expr& e,
    const std::function<std::vector<const sem::OpSpec*>(const std::string&)>& applied) {
  ScarceOps out;
  count_scarce(e, applied, out);
  // A scan's closed form may write its product more than once (scan_from: the start's and each
  // term's); what it computes is one element of one recurrence.
  if (out.count("range product")) out["range product"] = 1;
  return out;
}

AttainablePeaks compute_attainable_peaks(const target::Target& t) {
  AttainablePeaks p;
  double efficiency = 0;
  for (const auto& [bytes, fraction] : t.dma.efficiency)
    efficiency = std::max(efficiency, fraction);
  if (t.dma.efficiency.empty()) efficiency = 1;
  p.dma_bytes_per_s = t.dma.engines_per_core * t.dma.bytes_per_ns_per_engine * 1e9 * efficiency;
  p.hbm_bytes_per_s = t.chip.hbm_bytes_per_s;
  std::map<sem::Engine, double> per_engine;  // elements per second
  for (const auto& name : t.isa.names()) {
    const sem::InstrSpec& in = *t.isa.find(name);
    if (on(in, sem::Engine::Dma) || in.op.operands.empty()) continue;
    // The scarce operations it computes, each choice of an applied function counted.
    ScarceOps scarce = scarce_operations(*in.op.expr, [&](const std::string& attr) {
      std::vector<const sem::OpSpec*> ops;
      if (const sem::AttrSpec* a = in.op.attr(attr))
        for (const auto& name : a->choices) ops.push_back(sem::OpTable::builtin().find(name));
      return ops;
    });
    for (const auto& [name, n] : scarce) {
      double rate = elements_per_cycle(t, in) * n;
      for (sem::Engine e : in.engines) {
        double& best = p.scarce_per_s[name][e];
        best = std::max(best, rate * t.engines.at(e).clock_hz);
      }
    }
    if (on(in, sem::Engine::Tensor)) {
      if (in.op.contract.empty()) continue;  // transposes move data, they compute nothing
      p.matmul_flops_fp32 = std::max(p.matmul_flops_fp32, matmul_peak(t, in, ir::DType::F32));
      p.matmul_flops_bf16 = std::max(p.matmul_flops_bf16, matmul_peak(t, in, ir::DType::BF16));
      continue;
    }
    double rate = elements_per_cycle(t, in);
    for (sem::Engine e : in.engines)
      per_engine[e] = std::max(per_engine[e], rate * t.engines.at(e).clock_hz);
  }
  // The data operations per element an instruction applies, counted at its own rate against its
  // engine's best: a scan's closed form (a sum of products) counts more operations than the
  // recurrence it runs, which takes two cycles per element, not one (rounded up: the bound stays
  // above every instruction).
  for (const auto& name : t.isa.names()) {
    const sem::InstrSpec& in = *t.isa.find(name);
    if (on(in, sem::Engine::Dma) || on(in, sem::Engine::Tensor) || in.op.operands.empty()) continue;
    double rate = elements_per_cycle(t, in), fraction = 0;
    for (sem::Engine e : in.engines)
      if (per_engine[e] > 0)
        fraction = std::max(fraction, rate * t.engines.at(e).clock_hz / per_engine[e]);
    int ops = data_ops(*in.op.expr, in.op).first;
    p.ops_per_element =
        std::max(p.ops_per_element, static_cast<int>(std::ceil(ops * fraction - 1e-9)));
  }
  double elements_per_s = 0;
  for (const auto& [engine, rate] : per_engine) elements_per_s += rate;
  p.element_ops_per_s = elements_per_s * p.ops_per_element;
  return p;
}

const AttainablePeaks& attainable_peaks(const target::Target& t) {
  static std::mutex mu;
  static std::map<std::tuple<const target::Target*, std::string, std::string>, AttainablePeaks>
      cache;
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_tuple(&t, t.target_text, t.isa_text);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, compute_attainable_peaks(t)).first;
  return it->second;
}

}  // namespace ts::sim

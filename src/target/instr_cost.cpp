#include "tilesweep/target/instr_cost.h"

#include <array>
#include <cmath>
#include <vector>

namespace ts::target {

namespace {

double eval(const sem::Expr& e, const sem::InstrSpec& in, const CostVars& vars) {
  switch (e.kind) {
    case sem::Expr::Number:
      return e.number;
    case sem::Expr::Name: {
      const double* v = vars.find(e.name);
      if (!v)
        throw UserError(fmt::format(
            "error: the cost of instruction '{}' uses '{}', which is not a cost variable",
            in.op.name, e.name));
      return *v;
    }
    case sem::Expr::Neg:
      return -eval(*e.args[0], in, vars);
    case sem::Expr::Binary: {
      double a = eval(*e.args[0], in, vars), b = eval(*e.args[1], in, vars);
      switch (e.op) {
        case sem::BinOp::Add:
          return a + b;
        case sem::BinOp::Sub:
          return a - b;
        case sem::BinOp::Mul:
          return a * b;
        case sem::BinOp::Div:
          return a / b;
        case sem::BinOp::FloorDiv:
          return std::floor(a / b);
        case sem::BinOp::Mod:
          return a - std::floor(a / b) * b;
        case sem::BinOp::Lt:
          return a < b;
        case sem::BinOp::Le:
          return a <= b;
        case sem::BinOp::Gt:
          return a > b;
        case sem::BinOp::Ge:
          return a >= b;
        case sem::BinOp::Eq:
          return a == b;
        case sem::BinOp::Ne:
          return a != b;
      }
      return 0;
    }
    case sem::Expr::Call: {
      // At most three arguments are valid; more only reach the error below.
      std::array<double, 3> a{};
      std::vector<double> more;
      for (std::size_t i = 0; i < e.args.size(); ++i) {
        double v = eval(*e.args[i], in, vars);
        if (i < a.size())
          a[i] = v;
        else
          more.push_back(v);
      }
      const std::size_t n = e.args.size();
      if (e.name == "maximum" && n == 2) return std::max(a[0], a[1]);
      if (e.name == "minimum" && n == 2) return std::min(a[0], a[1]);
      if (e.name == "select" && n == 3) return a[0] != 0 ? a[1] : a[2];
      if (e.name == "ceil" && n == 1) return std::ceil(a[0]);
      throw UserError(fmt::format(
          "error: the cost of instruction '{}' calls '{}' (allowed: maximum, minimum, select)",
          in.op.name, e.name));
    }
    default:
      throw UserError(fmt::format(
          "error: the cost of instruction '{}' is not an arithmetic formula", in.op.name));
  }
}

// The variables every instruction has besides its pattern dims (instr_vars sets them last).
bool is_fixed_name(std::string_view name) {
  switch (name.size()) {
    case 1:
      return name[0] == 'P' || name[0] == 'N';
    case 4:
      return name == "fp32";
    case 5:
      return name == "bytes";
    case 6:
      return name == "MIN_II";
    case 9:
      return name == "psum_sbuf";
    default:
      return false;
  }
}

}  // namespace

double formula_value(const sem::InstrSpec& in, const CostVars& vars) {
  return eval(*in.cost, in, vars);
}

InstrVars instr_vars(const Target& t, const sem::InstrSpec& in, std::span<const TileShape> operands,
                     std::span<const std::int64_t> out, ir::DType dtype) {
  InstrVars r;
  // The pattern dims by slot (in.dim_names), each clipped to its limit (0: none); the copies
  // multiply once per clipped dim.
  constexpr std::size_t kSlots = 32;
  TS_CHECK(in.dim_names.size() <= kSlots, "instruction '{}' has more than {} pattern dims",
           in.op.name, kSlots);
  std::array<double, kSlots> value{};
  std::array<bool, kSlots> given{}, clipped{};
  auto clip = [&](int slot, std::int64_t limit, std::int64_t v) {
    if (limit == 0 || v <= limit) return v;
    if (!clipped[static_cast<std::size_t>(slot)])
      r.repeat *= static_cast<int>((v + limit - 1) / limit);
    clipped[static_cast<std::size_t>(slot)] = true;
    return limit;
  };
  for (std::size_t k = 0; k < operands.size() && k < in.op.shapes.size(); ++k) {
    const auto& slots = in.operand_dim_slots[k];
    const auto& limits = in.operand_limits[k];
    if (slots.size() != operands[k].size()) continue;
    for (std::size_t d = 0; d < slots.size(); ++d)
      if (int slot = slots[d]; slot >= 0) {
        value[static_cast<std::size_t>(slot)] =
            static_cast<double>(clip(slot, limits[d], operands[k][d]));
        given[static_cast<std::size_t>(slot)] = true;
      }
  }
  // A pattern dim named like a fixed variable (P, N, ...) takes the fixed value below.
  for (std::size_t i = 0; i < in.dim_names.size(); ++i)
    if (given[i] && !is_fixed_name(in.dim_names[i])) r.vars.add_new(in.dim_names[i], value[i]);
  // The output's dims, each clipped to its limit: one copy's elements and partitions.
  const bool named = in.out_dim_slots.size() == out.size();
  double elements = 1, whole = 1, partitions = 1;
  for (std::size_t d = 0; d < out.size(); ++d) {
    std::int64_t v = out[d];
    whole *= static_cast<double>(v);
    if (named && in.out_dim_slots[d] >= 0) v = clip(in.out_dim_slots[d], in.out_limits[d], v);
    elements *= static_cast<double>(v);
    if (d + 2 == out.size()) partitions = static_cast<double>(v);
  }
  r.vars.add_new("P", partitions);
  r.vars.add_new("N", elements / partitions);
  r.vars.add_new("MIN_II", t.overheads.min_ii_cycles);
  r.vars.add_new("fp32", dtype == ir::DType::F32 ? 1 : 0);
  r.vars.add_new("bytes", whole * ir::dtype_bytes(dtype));
  r.vars.add_new("psum_sbuf", 0);  // where the operands are is the simulator's (inst_timing.cpp)
  return r;
}

double instr_ns(const Target& t, const ir::Kernel& program, int id, const sem::DimEnv& env) {
  const ir::Node& n = program.nodes[id];
  const sem::InstrSpec* in = t.isa.find(n.op);
  if (!in) return 0;  // constants and broadcasts of immediates cost nothing here
  CostVars vars;
  for (std::size_t k = 0; k < n.inputs.size() && k < in->op.shapes.size(); ++k) {
    const auto& items = in->op.shapes[k].items;
    const auto& shape = program.nodes[n.inputs[k]].shape;
    if (items.size() != shape.size()) continue;
    for (std::size_t d = 0; d < items.size(); ++d)
      if (!items[d].group && !items[d].name.empty())
        if (auto v = shape[d].evaluate(env)) vars.set(items[d].name, static_cast<double>(*v));
  }
  double elements = 1;
  for (const auto& d : n.shape) elements *= static_cast<double>(d.evaluate(env).value_or(1));
  double partitions =
      n.shape.size() >= 2
          ? static_cast<double>(n.shape[n.shape.size() - 2].evaluate(env).value_or(1))
          : 1;
  const double bytes = elements * ir::dtype_bytes(n.dtype);
  vars.set("P", partitions);
  vars.set("N", elements / partitions);
  vars.set("MIN_II", t.overheads.min_ii_cycles);
  vars.set("fp32", n.dtype == ir::DType::F32 ? 1 : 0);
  vars.set("bytes", bytes);
  vars.set("psum_sbuf", 0);
  double value = formula_value(*in, vars);
  sem::Engine engine = in->engines.front();
  if (engine == sem::Engine::Dma) {
    double bw = t.dma.bytes_per_ns_per_engine * t.dma.engines_per_core *
                t.dma.efficiency_at(bytes / std::max(1.0, partitions));
    return t.dma.start_ns + t.dma.dge_ns + value / bw;
  }
  return value / t.engines.at(engine).clock_hz * 1e9;
}

double program_ns(const Target& t, const ir::Kernel& program, const sem::DimEnv& env) {
  double total = 0;
  for (std::size_t i = 0; i < program.nodes.size(); ++i)
    total += instr_ns(t, program, static_cast<int>(i), env);
  return total;
}

}  // namespace ts::target

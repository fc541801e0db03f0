#include "tilesweep/ir/interpreter.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace ts::ir {

namespace {

std::string format_env(const sem::DimEnv& env) {
  std::string s;
  for (const auto& [k, v] : env) s += (s.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return s;
}

// Evaluates one node's TermGraph at every output index.
class BodyEvaluator {
 public:
  // `fp32_sums`: a sum or product accumulates in float32, rounding after every step.
  BodyEvaluator(const Node& n, const std::vector<const Tensor*>& operands, const sem::DimEnv& env,
                bool fp32_sums)
      : g_(n.body),
        ops_(operands),
        sizes_(g_.nodes.size(), 0),
        vars_(g_.var_names.size(), 0),
        fp32_sums_(fp32_sums) {
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      if (g_.nodes[i].op != sem::TermOp::Size) continue;
      auto v = g_.nodes[i].size.evaluate(env);
      TS_CHECK(v, "size {} of '{}' is not bound", g_.nodes[i].size.str(), n.op);
      sizes_[i] = static_cast<double>(*v);
    }
    for (const Tensor* t : operands) {
      std::vector<std::int64_t> strides(t->shape.size(), 1);
      for (int d = static_cast<int>(t->shape.size()) - 2; d >= 0; --d)
        strides[d] = strides[d + 1] * t->shape[d + 1];
      strides_.push_back(std::move(strides));
    }
    op_ = n.op;
  }

  // Every element of `out`, passed through `store` (the rounding of the value as written).
  void run(Tensor& out, double (*store)(double)) {
    std::int64_t total = out.size();
    std::vector<std::int64_t> idx(out.shape.size(), 0);
    for (std::int64_t flat = 0; flat < total; ++flat) {
      for (std::size_t d = 0; d < idx.size(); ++d) vars_[d] = idx[d];
      double v = eval(g_.root);
      out.data[flat] = store ? store(v) : v;
      for (int d = static_cast<int>(idx.size()) - 1; d >= 0; --d) {
        if (++idx[d] < out.shape[d]) break;
        idx[d] = 0;
      }
    }
  }

 private:
  double eval(int id) {
    const sem::TermNode& n = g_.nodes[id];
    using sem::TermOp;
    switch (n.op) {
      case TermOp::Const:
        return n.value;
      case TermOp::Index:
        return static_cast<double>(vars_[n.var]);
      case TermOp::Size:
        return sizes_[id];
      case TermOp::Neg:
        return -eval(n.args[0]);
      case TermOp::Add:
        return eval(n.args[0]) + eval(n.args[1]);
      case TermOp::Sub:
        return eval(n.args[0]) - eval(n.args[1]);
      case TermOp::Mul:
        return eval(n.args[0]) * eval(n.args[1]);
      case TermOp::Div:
        return eval(n.args[0]) / eval(n.args[1]);
      case TermOp::FloorDiv:
        return std::floor(eval(n.args[0]) / eval(n.args[1]));
      case TermOp::Mod: {
        double a = eval(n.args[0]), b = eval(n.args[1]);
        return a - std::floor(a / b) * b;
      }
      case TermOp::Lt:
        return eval(n.args[0]) < eval(n.args[1]);
      case TermOp::Le:
        return eval(n.args[0]) <= eval(n.args[1]);
      case TermOp::Gt:
        return eval(n.args[0]) > eval(n.args[1]);
      case TermOp::Ge:
        return eval(n.args[0]) >= eval(n.args[1]);
      case TermOp::Eq:
        return eval(n.args[0]) == eval(n.args[1]);
      case TermOp::Ne:
        return eval(n.args[0]) != eval(n.args[1]);
      case TermOp::Select:
        return eval(n.args[0]) != 0 ? eval(n.args[1]) : eval(n.args[2]);
      case TermOp::Call:
        return call(n);
      case TermOp::Reduce:
        return reduce(n);
      case TermOp::Load:
        return load(n);
    }
    return 0;
  }

  double call(const sem::TermNode& n) {
    double a = eval(n.args[0]);
    switch (n.func) {
      case sem::Func::Exp:
        return std::exp(a);
      case sem::Func::Log:
        return std::log(a);
      case sem::Func::Sqrt:
        return std::sqrt(a);
      case sem::Func::Tanh:
        return std::tanh(a);
      case sem::Func::Abs:
        return std::fabs(a);
      case sem::Func::Sin:
        return std::sin(a);
      case sem::Func::Cos:
        return std::cos(a);
      case sem::Func::Maximum:
        return std::max(a, eval(n.args[1]));
      case sem::Func::Minimum:
        return std::min(a, eval(n.args[1]));
    }
    return 0;
  }

  double reduce(const sem::TermNode& n) {
    auto extent = static_cast<std::int64_t>(eval(n.args[0]));
    double acc = 0;
    switch (n.reducer) {
      case sem::Reducer::Sum:
        acc = 0;
        break;
      case sem::Reducer::Prod:
        acc = 1;
        break;
      case sem::Reducer::Max:
        acc = -std::numeric_limits<double>::infinity();
        break;
      case sem::Reducer::Min:
        acc = std::numeric_limits<double>::infinity();
        break;
    }
    std::int64_t saved = vars_[n.var];
    for (std::int64_t i = 0; i < extent; ++i) {
      vars_[n.var] = i;
      double v = eval(n.args[1]);
      switch (n.reducer) {
        case sem::Reducer::Sum:
          acc = fp32_sums_ ? round_f32(acc + v) : acc + v;
          break;
        case sem::Reducer::Prod:
          acc = fp32_sums_ ? round_f32(acc * v) : acc * v;
          break;
        case sem::Reducer::Max:
          acc = std::max(acc, v);
          break;
        case sem::Reducer::Min:
          acc = std::min(acc, v);
          break;
      }
    }
    vars_[n.var] = saved;
    return acc;
  }

  double load(const sem::TermNode& n) {
    const Tensor& t = *ops_[n.operand];
    const auto& strides = strides_[n.operand];
    std::int64_t off = 0;
    for (std::size_t d = 0; d < n.args.size(); ++d) {
      // (an index that is a loop variable, the common case, read without the recursion)
      const sem::TermNode& a = g_.nodes[n.args[d]];
      std::int64_t i =
          a.op == sem::TermOp::Index ? vars_[a.var] : static_cast<std::int64_t>(eval(n.args[d]));
      TS_CHECK(i >= 0 && i < t.shape[d], "op '{}' reads operand {} at index {} of dim {} (size {})",
               op_, n.operand, i, d, t.shape[d]);
      off += i * strides[d];
    }
    return t.data[off];
  }

  const sem::TermGraph& g_;
  const std::vector<const Tensor*>& ops_;
  std::vector<std::vector<std::int64_t>> strides_;
  std::vector<double> sizes_;
  std::vector<std::int64_t> vars_;
  bool fp32_sums_ = false;
  std::string op_;
};

// True for a value that is a Python number in the kernel (a literal, a scalar parameter, or an
// expression of those only): an immediate operand on the hardware, not a tile.
std::vector<bool> number_nodes(const Kernel& k) {
  std::vector<bool> number(k.nodes.size(), false);
  for (std::size_t i = 0; i < k.nodes.size(); ++i) {
    const Node& n = k.nodes[i];
    bool all = !n.inputs.empty();
    for (int j : n.inputs) all = all && number[j];
    number[i] = n.weak || (n.param >= 0 && k.params[n.param].scalar) || all;
  }
  return number;
}

// True for a value whose dtype the kernel pins: an op whose spec fixes or casts its dtype (iota,
// astype) and values computed only from such values (a mask of iota comparisons). `--precision
// bf16` stores them in their own dtype, not in bf16: an index past 256 must stay exact.
std::vector<bool> pinned_nodes(const Kernel& k) {
  std::vector<bool> pinned(k.nodes.size(), false);
  for (std::size_t i = 0; i < k.nodes.size(); ++i) {
    const Node& n = k.nodes[i];
    if (!n.spec) continue;
    bool own = !n.spec->dtype_fixed.empty() || !n.spec->dtype_cast.empty();
    bool any = false, all = true;
    for (int j : n.inputs) {
      if (k.nodes[j].weak) continue;
      any = true;
      all = all && pinned[j];
    }
    pinned[i] = own || (any && all);
  }
  return pinned;
}

using Store = double (*)(double);

// Rounding to `dtype` itself.
Store rounding_to(DType dtype) {
  switch (dtype) {
    case DType::BF16:
      return round_bf16;
    case DType::F16:
      return [](double v) { return round_to(DType::F16, v); };
    case DType::F8:
      return [](double v) { return round_to(DType::F8, v); };
    case DType::F32:
      return round_f32;
  }
  return nullptr;
}

// How a value is stored: as computed (F64), float32, or for BF16 bfloat16 unless it is a number,
// pinned to its own dtype, or an f8 value (an f8 tile is narrower than bf16: float8_e4m3).
Store storage(Precision p, bool number, bool pinned, DType dtype) {
  if (p == Precision::F64) return nullptr;
  if (p == Precision::BF16 && (pinned || (dtype == DType::F8 && !number)))
    return rounding_to(dtype);
  return p == Precision::BF16 && !number ? round_bf16 : round_f32;
}

// A cast (an op whose spec casts, like astype) rounds its values to its dtype at f32 and bf16
// precision, as NumPy's x.astype does; at f64 (the real-number reference, where no dtype rounds,
// as in the proofs) it is exact. Other values are stored as `precision` says.
Store cast_storage(const Node& n, Precision p) {
  if (p == Precision::F64 || !n.spec || n.spec->dtype_cast.empty()) return nullptr;
  return rounding_to(n.dtype);
}

}  // namespace

std::vector<std::int64_t> concrete_shape(const std::vector<Dim>& shape, const sem::DimEnv& dims) {
  std::vector<std::int64_t> out;
  for (const Dim& d : shape) {
    auto v = d.evaluate(dims);
    if (!v)
      throw UserError(
          fmt::format("error: dim {} is not determined by {}", d.str(), format_env(dims)));
    if (*v < 0)
      throw UserError(
          fmt::format("error: dim {} is negative ({}) for {}", d.str(), *v, format_env(dims)));
    out.push_back(*v);
  }
  return out;
}

sem::DimEnv bind_dims(const Kernel& k, const sem::DimEnv& given,
                      const std::vector<const Tensor*>& inputs) {
  sem::DimEnv env;
  for (const auto& [name, v] : given) {
    if (std::find(k.dims.begin(), k.dims.end(), name) == k.dims.end())
      throw UserError(fmt::format("error: kernel '{}' has no dim '{}' (its dims: {})", k.name, name,
                                  fmt::join(k.dims, ", ")));
    env[name] = v;
  }
  for (std::size_t p = 0; p < k.params.size() && p < inputs.size(); ++p) {
    if (!inputs[p]) continue;
    const Param& param = k.params[p];
    const Tensor& t = *inputs[p];
    if (t.shape.size() != param.shape.size())
      throw UserError(fmt::format(
          "error: input '{}' has rank {} (shape {}) but kernel '{}' declares {}", param.name,
          t.shape.size(), t.shape_str(), k.name, format_shape(param.shape)));
    for (std::size_t d = 0; d < t.shape.size(); ++d) {
      const Dim& want = param.shape[d];
      auto syms = want.symbols();
      if (want.is_const() || syms.size() != 1 || !(want == Dim::symbol(syms[0]))) continue;
      auto [it, inserted] = env.try_emplace(syms[0], t.shape[d]);
      if (!inserted && it->second != t.shape[d])
        throw UserError(
            fmt::format("error: input '{}' has {} = {} (shape {}), but {} = {} elsewhere",
                        param.name, syms[0], t.shape[d], t.shape_str(), syms[0], it->second));
    }
  }
  for (const auto& d : k.dims) {
    auto it = env.find(d);
    if (it == env.end())
      throw UserError(fmt::format("error: dim {} of kernel '{}' is not given; pass --shape {}=...",
                                  d, k.name, d));
    if (it->second < 1)
      throw UserError(fmt::format("error: dim {} = {} must be at least 1", d, it->second));
  }
  return env;
}

std::vector<Tensor> evaluate(const Kernel& k, const sem::DimEnv& dims,
                             const std::vector<Tensor>& inputs, Precision precision) {
  for (const auto& p : k.preconditions) {
    auto ok = p.holds(dims);
    if (ok && *ok) continue;
    std::string what = fmt::format("kernel '{}' requires {} ({}), which fails for {}: {}", k.name,
                                   p.str(), p.what, format_env(dims), p.values(dims));
    if (p.loc.known()) throw UserError(p.loc, what);
    throw UserError("error: " + what);
  }
  if (inputs.size() != k.params.size())
    throw UserError(fmt::format("error: kernel '{}' takes {} inputs, got {}", k.name,
                                k.params.size(), inputs.size()));
  std::vector<bool> number = number_nodes(k), pinned = pinned_nodes(k);
  std::vector<Tensor> values(k.nodes.size());
  for (std::size_t i = 0; i < k.nodes.size(); ++i) {
    const Node& n = k.nodes[i];
    std::vector<std::int64_t> shape = concrete_shape(n.shape, dims);
    if (n.param >= 0) {
      const Tensor& in = inputs[n.param];
      if (in.shape != shape)
        throw UserError(
            fmt::format("error: input '{}' has shape {} but kernel '{}' expects {} = {}",
                        k.params[n.param].name, in.shape_str(), k.name, format_shape(n.shape),
                        Tensor(shape).shape_str()));
      values[i] = in;
      if (auto store = storage(precision, number[i], false, n.dtype))
        for (double& v : values[i].data) v = store(v);
      continue;
    }
    std::vector<const Tensor*> operands;
    for (int j : n.inputs) operands.push_back(&values[j]);
    Tensor out(shape);
    Store store = cast_storage(n, precision);
    if (!store) store = storage(precision, number[i], pinned[i], n.dtype);
    BodyEvaluator(n, operands, dims, precision == Precision::BF16).run(out, store);
    values[i] = std::move(out);
  }
  std::vector<Tensor> outs;
  for (int o : k.outputs) outs.push_back(values[o]);
  return outs;
}

}  // namespace ts::ir

#include "encoder.h"

#include <fmt/format.h>

#include <cstdlib>

#include "tilesweep/base/error.h"

namespace ts::verify {

z3::expr Symbols::dim(const std::string& name) {
  auto it = dims_.find(name);
  if (it == dims_.end()) it = dims_.emplace(name, ctx_.int_const(name.c_str())).first;
  return it->second;
}

z3::expr Symbols::dim_expr(const sem::Dim& d) {
  z3::expr total = ctx_.int_val(0);
  for (const auto& [key, t] : d.terms()) {
    z3::expr prod = ctx_.int_val(static_cast<std::int64_t>(t.coeff));
    for (const auto& a : t.atoms) {
      if (!a->symbol.empty()) {
        prod = prod * dim(a->symbol);
      } else {
        prod = prod * z3::expr(ctx_, Z3_mk_div(ctx_, dim_expr(a->num), dim_expr(a->den)));
      }
    }
    total = total + prod;
  }
  return total.simplify();
}

z3::func_decl Symbols::input(int position, int rank) {
  auto key = std::make_pair(position, rank);
  auto it = inputs_.find(key);
  if (it != inputs_.end()) return it->second;
  z3::sort_vector dom(ctx_);
  for (int i = 0; i < rank; ++i) dom.push_back(ctx_.int_sort());
  std::string name = fmt::format("in{}", position);
  return inputs_.emplace(key, ctx_.function(name.c_str(), dom, ctx_.real_sort())).first->second;
}

z3::expr Encoder::numeral(double v) {
  // The exact rational of the shortest decimal that prints v.
  std::string s = fmt::format("{}", v);
  bool negative = !s.empty() && s[0] == '-';
  if (negative) s = s.substr(1);
  int exp10 = 0;
  if (auto e = s.find_first_of("eE"); e != std::string::npos) {
    exp10 = std::atoi(s.c_str() + e + 1);
    s = s.substr(0, e);
  }
  if (auto dot = s.find('.'); dot != std::string::npos) {
    exp10 -= static_cast<int>(s.size() - dot - 1);
    s.erase(dot, 1);
  }
  std::string num = s, den = "1";
  if (exp10 >= 0) num += std::string(exp10, '0');
  else den += std::string(-exp10, '0');
  std::string text = (negative ? "-" : "") + num + "/" + den;
  return sym_.ctx().real_val(text.c_str());
}

Poly Encoder::node(int id, const std::vector<z3::expr>& index) {
  std::string key = std::to_string(id);
  for (const auto& e : index) key += "," + std::to_string(Z3_get_ast_id(sym_.ctx(), e));
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  const ir::Node& n = k_.nodes[id];
  Poly result;
  if (n.param >= 0) {
    z3::func_decl f = sym_.input(n.param, static_cast<int>(index.size()));
    z3::expr_vector args(sym_.ctx());
    for (const auto& e : index) args.push_back(e);
    result = nf_.factor(f(args));
  } else {
    std::vector<z3::expr> vars;
    for (const auto& e : index) vars.push_back(e);
    for (std::size_t v = index.size(); v < n.body.var_names.size(); ++v)
      vars.push_back(sym_.ctx().int_val(0));  // reduction variables are bound when reached
    result = as_real(term(n, n.body.root, vars, index));
  }
  memo_.emplace(key, result);
  return result;
}

z3::expr Encoder::as_int(const Val& v, const ir::Node& n) {
  TS_CHECK(!v.is_real, "op '{}': a real value used as an index", n.op);
  return v.i;
}

Poly Encoder::as_real(const Val& v) {
  if (v.is_real) return v.p;
  z3::expr i = v.i;
  if (i.is_bool()) return nf_.bracket(i);
  z3::expr s = i.simplify();
  if (s.is_numeral()) return nf_.constant(z3::to_real(s).simplify());
  return nf_.factor(z3::to_real(s));
}

Encoder::Val Encoder::term(const ir::Node& n, int t, std::vector<z3::expr>& vars, const std::vector<z3::expr>& index) {
  const sem::TermNode& tn = n.body.nodes[t];
  z3::context& c = sym_.ctx();
  auto real = [&](Poly p) {
    Val v(c.bool_val(true));
    v.is_real = true;
    v.p = std::move(p);
    return v;
  };
  auto integer = [](z3::expr e) { return Val(std::move(e)); };
  auto arg = [&](int k) { return term(n, tn.args[k], vars, index); };
  using sem::TermOp;
  switch (tn.op) {
    case TermOp::Const:
      if (tn.integer) return integer(c.int_val(static_cast<std::int64_t>(tn.value)));
      return real(nf_.constant(numeral(tn.value)));
    case TermOp::Index: return integer(vars[tn.var]);
    case TermOp::Size: return integer(sym_.dim_expr(tn.size));
    case TermOp::Neg: {
      Val a = arg(0);
      if (!a.is_real && !a.i.is_bool()) return integer(-a.i);
      return real(nf_.neg(as_real(a)));
    }
    case TermOp::Add: case TermOp::Sub: case TermOp::Mul: {
      Val a = arg(0), b = arg(1);
      if (!a.is_real && !b.is_real && !a.i.is_bool() && !b.i.is_bool()) {
        if (tn.op == TermOp::Add) return integer(a.i + b.i);
        if (tn.op == TermOp::Sub) return integer(a.i - b.i);
        return integer(a.i * b.i);
      }
      Poly pa = as_real(a), pb = as_real(b);
      if (tn.op == TermOp::Add) return real(nf_.add(pa, pb));
      if (tn.op == TermOp::Sub) return real(nf_.add(pa, nf_.neg(pb)));
      return real(nf_.mul(pa, pb));
    }
    case TermOp::Div: {
      Poly num = as_real(arg(0));
      z3::expr den = nf_.to_z3(as_real(arg(1))).simplify();
      return real(nf_.mul(num, nf_.factor((c.real_val(1) / den).simplify())));
    }
    case TermOp::FloorDiv: return integer(z3::expr(c, Z3_mk_div(c, as_int(arg(0), n), as_int(arg(1), n))));
    case TermOp::Mod: return integer(z3::mod(as_int(arg(0), n), as_int(arg(1), n)));
    case TermOp::Lt: case TermOp::Le: case TermOp::Gt: case TermOp::Ge: case TermOp::Eq: case TermOp::Ne: {
      Val a = arg(0), b = arg(1);
      z3::expr x = a.is_real ? nf_.to_z3(a.p) : a.i;
      z3::expr y = b.is_real ? nf_.to_z3(b.p) : b.i;
      if (x.is_int() != y.is_int()) {
        if (x.is_int()) x = z3::to_real(x);
        if (y.is_int()) y = z3::to_real(y);
      }
      switch (tn.op) {
        case TermOp::Lt: return integer(x < y);
        case TermOp::Le: return integer(x <= y);
        case TermOp::Gt: return integer(x > y);
        case TermOp::Ge: return integer(x >= y);
        case TermOp::Eq: return integer(x == y);
        default: return integer(x != y);
      }
    }
    case TermOp::Select: {
      Val cnd = arg(0), a = arg(1), b = arg(2);
      z3::expr cond = cnd.is_real ? nf_.to_z3(cnd.p) != c.real_val(0)
                                  : (cnd.i.is_bool() ? cnd.i : cnd.i != c.int_val(0));
      if (!a.is_real && !b.is_real && !a.i.is_bool() && !b.i.is_bool()) return integer(z3::ite(cond, a.i, b.i));
      return real(nf_.select(cond, as_real(a), as_real(b)));
    }
    case TermOp::Call: {
      std::vector<z3::expr> xs;
      for (std::size_t k = 0; k < tn.args.size(); ++k) xs.push_back(nf_.to_z3(as_real(arg(static_cast<int>(k)))).simplify());
      switch (tn.func) {
        case sem::Func::Maximum: return real(nf_.factor(z3::ite(xs[0] >= xs[1], xs[0], xs[1])));
        case sem::Func::Minimum: return real(nf_.factor(z3::ite(xs[0] <= xs[1], xs[0], xs[1])));
        case sem::Func::Abs: return real(nf_.factor(z3::ite(xs[0] < 0, -xs[0], xs[0])));
        default: break;
      }
      std::string name = sem::func_name(tn.func);
      auto it = funcs_.find(name);
      if (it == funcs_.end()) it = funcs_.emplace(name, c.function(name.c_str(), c.real_sort(), c.real_sort())).first;
      return real(nf_.factor(it->second(xs[0])));
    }
    case TermOp::Reduce: {
      z3::expr extent = as_int(arg(0), n);
      z3::expr var = c.int_const(fmt::format("{}r{}", prefix_, next_var_++).c_str());
      z3::expr saved = vars[tn.var];
      vars[tn.var] = var;
      Poly body = as_real(term(n, tn.args[1], vars, index));
      vars[tn.var] = saved;
      switch (tn.reducer) {
        case sem::Reducer::Sum: return real(nf_.sum(var, extent, body));
        case sem::Reducer::Prod: return real(nf_.reduce_atom("prod", var, extent, body));
        case sem::Reducer::Max: return real(nf_.reduce_atom("max", var, extent, body));
        case sem::Reducer::Min: return real(nf_.reduce_atom("min", var, extent, body));
      }
      return real(body);
    }
    case TermOp::Load: return load(n, tn, vars, index);
  }
  TS_CHECK(false, "unhandled term in op '{}'", n.op);
}

Encoder::Val Encoder::load(const ir::Node& n, const sem::TermNode& t, std::vector<z3::expr>& vars,
                           const std::vector<z3::expr>& index) {
  std::vector<z3::expr> at;
  for (int a : t.args) at.push_back(as_int(term(n, a, vars, index), n).simplify());
  Val v(sym_.ctx().bool_val(true));
  v.is_real = true;
  v.p = node(n.inputs[t.operand], at);
  return v;
}

}  // namespace ts::verify

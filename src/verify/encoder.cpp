#include "encoder.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "tilesweep/base/error.h"

namespace ts::verify {

namespace {

z3::expr conjunction(z3::context& c, const std::vector<z3::expr>& xs) {
  z3::expr all = c.bool_val(true);
  for (const auto& x : xs) all = all && x;
  return all.simplify();
}

}  // namespace

z3::expr Symbols::dim(const std::string& name) {
  auto it = dims_.find(name);
  // Internal names carry a '!', which no kernel-language identifier can: a dim never meets an
  // output index, a reduction variable or a binder of the same spelling.
  if (it == dims_.end())
    it = dims_.emplace(name, ctx_.int_const((kDimPrefix + name).c_str())).first;
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
  std::string name = fmt::format("in!{}", position);
  return inputs_.emplace(key, ctx_.function(name.c_str(), dom, ctx_.real_sort())).first->second;
}

Encoder::Encoder(const ir::Kernel& k, Symbols& symbols, NormalForm& nf, std::string prefix,
                 std::vector<int> param_position)
    : k_(k),
      sym_(symbols),
      nf_(nf),
      prefix_(std::move(prefix)),
      param_position_(std::move(param_position)) {}

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
  if (exp10 >= 0)
    num += std::string(exp10, '0');
  else
    den += std::string(-exp10, '0');
  std::string text = (negative ? "-" : "") + num + "/" + den;
  return sym_.ctx().real_val(text.c_str());
}

Element Encoder::element(int id, const std::vector<z3::expr>& index) {
  std::vector<z3::expr> conditions;
  conditions_ = &conditions;
  Poly p = node(id, index);
  conditions_ = nullptr;
  return Element{std::move(p), conjunction(sym_.ctx(), conditions)};
}

void Encoder::require(const z3::expr& condition) {
  z3::expr c = condition.simplify();
  if (!c.is_true()) conditions_->push_back(c);
}

Poly Encoder::node(int id, const std::vector<z3::expr>& index) {
  std::string key = std::to_string(id);
  for (const auto& e : index) key += "," + std::to_string(Z3_get_ast_id(sym_.ctx(), e));
  if (auto it = memo_.find(key); it != memo_.end()) {
    for (const auto& c : it->second.conditions) conditions_->push_back(c);
    return it->second.p;
  }
  const ir::Node& n = k_.nodes[id];
  std::vector<z3::expr> mine, *outer = conditions_;
  conditions_ = &mine;
  Poly result;
  if (n.param >= 0) {
    z3::func_decl f = sym_.input(param_position_[n.param], static_cast<int>(index.size()));
    z3::expr_vector args(sym_.ctx());
    for (const auto& e : index) args.push_back(e);
    result = nf_.factor(f(args));
  } else {
    Vars vars(index.begin(), index.end());
    for (std::size_t v = index.size(); v < n.body.var_names.size(); ++v)
      vars.push_back(sym_.ctx().int_val(0));  // reduction variables are bound when reached
    result = as_real(term(n, n.body.root, vars, index));
  }
  conditions_ = outer;
  for (const auto& c : mine) conditions_->push_back(c);
  memo_.emplace(key, Memo{result, std::move(mine)});
  return result;
}

z3::expr Encoder::as_int(const Val& v, const ir::Node& n) {
  TS_CHECK(!v.is_real, "op '{}': a real value used as an index", n.op);
  return v.i;
}

Poly Encoder::as_real(const Val& v) {
  if (v.is_real) return v.p;
  z3::expr i = v.i;
  if (i.is_bool()) return nf_.bracket(settle(i));
  z3::expr s = i.simplify();
  if (s.is_numeral()) return nf_.constant(z3::to_real(s).simplify());
  return nf_.factor(z3::to_real(s));
}

Encoder::Val Encoder::real(Poly p) {
  Val v(sym_.ctx().bool_val(true));
  v.is_real = true;
  v.p = std::move(p);
  return v;
}

Encoder::Val Encoder::term(const ir::Node& n, int t, Vars& vars,
                           const std::vector<z3::expr>& index) {
  const sem::TermNode& tn = n.body.nodes[t];
  z3::context& c = sym_.ctx();
  auto arg = [&](int k) { return term(n, tn.args[k], vars, index); };
  using sem::TermOp;
  switch (tn.op) {
    case TermOp::Const:
      if (tn.integer) return Val(c.int_val(static_cast<std::int64_t>(tn.value)));
      if (std::isinf(tn.value)) {
        // A real has no infinity: `inf` is one opaque real shared by both sides of a query, so
        // a rewrite that moves `-inf` (a mask's fill) is proved for any value it stands for.
        Poly inf = nf_.factor(c.real_const("inf!"));
        return real(tn.value > 0 ? inf : nf_.neg(inf));
      }
      return real(nf_.constant(numeral(tn.value)));
    case TermOp::Index:
      return Val(vars[tn.var]);
    case TermOp::Size:
      return Val(sym_.dim_expr(tn.size));
    case TermOp::Neg: {
      Val a = arg(0);
      if (!a.is_real && !a.i.is_bool()) return Val(-a.i);
      return real(nf_.neg(as_real(a)));
    }
    case TermOp::Add:
    case TermOp::Sub:
    case TermOp::Mul:
    case TermOp::Div:
      return arith(n, tn, vars, index);
    case TermOp::FloorDiv:
      return Val(z3::expr(c, Z3_mk_div(c, as_int(arg(0), n), as_int(arg(1), n))));
    case TermOp::Mod:
      return Val(z3::mod(as_int(arg(0), n), as_int(arg(1), n)));
    case TermOp::Lt:
    case TermOp::Le:
    case TermOp::Gt:
    case TermOp::Ge:
    case TermOp::Eq:
    case TermOp::Ne:
      return compare(n, tn, vars, index);
    case TermOp::Select:
      return select(n, tn, vars, index);
    case TermOp::Call:
      return call(n, tn, vars, index);
    case TermOp::Reduce:
      return reduce(n, tn, vars, index);
    case TermOp::Load:
      return load(n, tn, vars, index);
  }
  TS_CHECK(false, "unhandled term in op '{}'", n.op);
}

Encoder::Val Encoder::arith(const ir::Node& n, const sem::TermNode& tn, Vars& vars,
                            const std::vector<z3::expr>& index) {
  z3::context& c = sym_.ctx();
  Val a = term(n, tn.args[0], vars, index), b = term(n, tn.args[1], vars, index);
  using sem::TermOp;
  if (tn.op == TermOp::Div) {
    // Division by zero leaves the element undefined (NaN or an infinity in IEEE arithmetic).
    Poly divisor = as_real(b);
    z3::expr den = nf_.to_z3(divisor).simplify();
    // A divisor positive by its form (a sum of exps) is a fact, not a condition.
    if (positive(divisor))
      facts_.push_back(den > c.real_val(0));
    else
      require(den != c.real_val(0));
    return real(nf_.mul(as_real(a), nf_.factor((c.real_val(1) / den).simplify())));
  }
  if (!a.is_real && !b.is_real && !a.i.is_bool() && !b.i.is_bool()) {
    if (tn.op == TermOp::Add) return Val(a.i + b.i);
    if (tn.op == TermOp::Sub) return Val(a.i - b.i);
    return Val(a.i * b.i);
  }
  Poly pa = as_real(a), pb = as_real(b);
  if (tn.op == TermOp::Add) return real(nf_.add(pa, pb));
  if (tn.op == TermOp::Sub) return real(nf_.add(pa, nf_.neg(pb)));
  return real(nf_.mul(pa, pb));
}

Encoder::Val Encoder::compare(const ir::Node& n, const sem::TermNode& tn, Vars& vars,
                              const std::vector<z3::expr>& index) {
  Val a = term(n, tn.args[0], vars, index), b = term(n, tn.args[1], vars, index);
  z3::expr x = a.is_real ? nf_.to_z3(a.p) : a.i;
  z3::expr y = b.is_real ? nf_.to_z3(b.p) : b.i;
  if (x.is_int() != y.is_int()) {
    if (x.is_int()) x = z3::to_real(x);
    if (y.is_int()) y = z3::to_real(y);
  }
  switch (tn.op) {
    case sem::TermOp::Lt:
      return Val(x < y);
    case sem::TermOp::Le:
      return Val(x <= y);
    case sem::TermOp::Gt:
      return Val(x > y);
    case sem::TermOp::Ge:
      return Val(x >= y);
    case sem::TermOp::Eq:
      return Val(x == y);
    default:
      return Val(x != y);
  }
}

Encoder::Val Encoder::select(const ir::Node& n, const sem::TermNode& tn, Vars& vars,
                             const std::vector<z3::expr>& index) {
  z3::context& c = sym_.ctx();
  Val cnd = term(n, tn.args[0], vars, index);
  z3::expr cond = cnd.is_real ? nf_.to_z3(cnd.p) != c.real_val(0)
                              : (cnd.i.is_bool() ? cnd.i : cnd.i != c.int_val(0));
  cond = settle(cond);
  // Both branches are computed; the element is defined when the chosen one is.
  std::vector<z3::expr> ca, cb, *outer = conditions_;
  conditions_ = &ca;
  Val a = term(n, tn.args[1], vars, index);
  conditions_ = &cb;
  Val b = term(n, tn.args[2], vars, index);
  conditions_ = outer;
  if (!ca.empty() || !cb.empty())
    require((cond && conjunction(c, ca)) || (!cond && conjunction(c, cb)));
  if (!a.is_real && !b.is_real && !a.i.is_bool() && !b.i.is_bool())
    return Val(z3::ite(cond, a.i, b.i));
  return real(nf_.select(cond, as_real(a), as_real(b)));
}

Encoder::Val Encoder::load(const ir::Node& n, const sem::TermNode& t, Vars& vars,
                           const std::vector<z3::expr>& index) {
  std::vector<z3::expr> at;
  for (int a : t.args) at.push_back(as_int(term(n, a, vars, index), n).simplify());
  return real(node(n.inputs[t.operand], at));
}

}  // namespace ts::verify

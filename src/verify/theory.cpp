// Primitive functions. exp and log follow the laws of exponents, applied as rewrites of the
// normal form (identities over all reals, so no quantified axiom reaches the solver):
//   exp(a + b) = exp(a) exp(b)     exp(-a) = 1 / exp(a)     exp(n a) = exp(a)^n (|n| <= 4)
//   exp(0) = 1                     log(c exp(a1) ... / exp(b1) ... r) = log c + a1 - b1 + log r
//                                  (c > 0 a constant; exps are positive, so both sides are
//                                  defined exactly where r > 0)
// and the facts exp(u) > 0, sqrt(u) >= 0 are given to the solver for every u encoded. log(x) is
// defined for x > 0 and sqrt(x) for x >= 0; tanh, sin, cos are uninterpreted and total.
#include <map>

#include "encoder.h"

namespace ts::verify {

namespace {

bool is_app_of(const z3::expr& e, const z3::func_decl& f) {
  return e.is_app() && Z3_is_eq_func_decl(e.ctx(), e.decl(), f);
}

// p/q when `e` is a rational numeral.
bool rational(const z3::expr& e, std::int64_t& p, std::int64_t& q) {
  return e.is_numeral() && Z3_get_numeral_rational_int64(e.ctx(), e, &p, &q);
}

}  // namespace

// Positive by its form: a sum of monomials with positive coefficients, each a product of exps,
// reciprocals of exps and sums of such over non-empty ranges (extents that are products of dims).
// A divisor of this form needs no definedness condition.
bool Encoder::positive(const Poly& p) {
  z3::func_decl exp = func("exp");
  auto positive_factor = [&](const z3::expr& f) {
    if (is_app_of(f, exp)) return true;
    return f.is_app() && f.decl().decl_kind() == Z3_OP_DIV && f.arg(0).is_numeral() &&
           (f.arg(0) > 0).simplify().is_true() && is_app_of(f.arg(1), exp);
  };
  auto nonempty = [](const z3::expr& extent) {
    std::int64_t n = 0;
    if (extent.is_numeral_i64(n)) return n >= 1;
    if (extent.is_app() && extent.num_args() == 0)
      return is_shared_name(extent.decl().name().str());
    if (!extent.is_app() || extent.decl().decl_kind() != Z3_OP_MUL) return false;
    for (unsigned i = 0; i < extent.num_args(); ++i)
      if (!(extent.arg(i).num_args() == 0 && is_shared_name(extent.arg(i).decl().name().str())))
        return false;
    return true;
  };
  if (p.monos.empty()) return false;
  for (const auto& m : p.monos) {
    if (!(m.coeff > 0).simplify().is_true()) return false;
    for (const auto& b : m.binders)
      if (!nonempty(b.extent)) return false;
    for (const auto& f : m.factors)
      if (!positive_factor(f)) return false;
  }
  return true;
}

z3::func_decl Encoder::func(const std::string& name) {
  auto it = funcs_.find(name);
  z3::context& c = sym_.ctx();
  std::string internal = "fn!" + name;
  if (it == funcs_.end())
    it = funcs_.emplace(name, c.function(internal.c_str(), c.real_sort(), c.real_sort())).first;
  return it->second;
}

Encoder::Val Encoder::call(const ir::Node& n, const sem::TermNode& tn, Vars& vars,
                           const std::vector<z3::expr>& index) {
  std::vector<Poly> ps;
  for (int a : tn.args) ps.push_back(as_real(term(n, a, vars, index)));
  switch (tn.func) {
    case sem::Func::Exp:
      return real(exp_of(ps[0]));
    case sem::Func::Log:
      return real(log_of(ps[0]));
    default:
      break;
  }
  std::vector<z3::expr> xs;
  for (const auto& p : ps) xs.push_back(nf_.to_z3(p).simplify());
  switch (tn.func) {
    case sem::Func::Maximum:
      return real(nf_.factor(z3::ite(xs[0] >= xs[1], xs[0], xs[1])));
    case sem::Func::Minimum:
      return real(nf_.factor(z3::ite(xs[0] <= xs[1], xs[0], xs[1])));
    case sem::Func::Abs:
      return real(nf_.factor(z3::ite(xs[0] < 0, -xs[0], xs[0])));
    case sem::Func::Sqrt: {
      require(xs[0] >= 0);
      z3::expr s = func("sqrt")(xs[0]);
      facts_.push_back(s >= 0);
      return real(nf_.factor(s));
    }
    default:
      return real(nf_.factor(func(sem::func_name(tn.func))(xs[0])));
  }
}

Poly Encoder::exp_of(const Poly& arg) {
  z3::context& c = sym_.ctx();
  // Like monomials gathered: exp(x + x) is exp(x)^2, whatever way the exponent was written.
  std::map<std::string, std::pair<z3::expr, z3::expr>> groups;  // text -> (coefficient, term)
  for (const auto& m : arg.monos) {
    Mono unit = m;
    unit.coeff = c.real_val(1);
    z3::expr t = nf_.to_z3(Poly{{unit}}).simplify();
    auto [it, fresh] = groups.try_emplace(t.to_string(), m.coeff, t);
    if (!fresh) it->second.first = (it->second.first + m.coeff).simplify();
  }
  Poly result = nf_.constant(c.real_val(1));
  for (const auto& [text, g] : groups) {
    const auto& [coeff, t] = g;
    std::int64_t p = 0, q = 1;
    bool small = rational(coeff, p, q);
    if (small && p == 0) continue;
    bool whole = small && q == 1 && p >= -4 && p <= 4;
    bool negative = (coeff < 0).simplify().is_true();
    z3::expr magnitude = (negative ? -coeff : coeff).simplify();
    z3::expr e = func("exp")(whole ? t : (magnitude * t).simplify());
    facts_.push_back(e > 0);
    Poly one = negative ? nf_.factor((c.real_val(1) / e).simplify()) : nf_.factor(e);
    for (std::int64_t k = 0; k < (whole ? (p < 0 ? -p : p) : 1); ++k) result = nf_.mul(result, one);
  }
  return result;
}

// log(c exp(a1) ... / exp(b1) ... * rest) = log c + a1 + ... - b1 - ... + log(rest) for c > 0:
// the exps are positive, so both sides are defined exactly where rest > 0.
Poly Encoder::log_of(const Poly& arg) {
  z3::context& c = sym_.ctx();
  z3::func_decl exp = func("exp");
  std::int64_t p = 0, q = 1;
  if (arg.monos.size() == 1 && rational(arg.monos[0].coeff, p, q) && p > 0) {
    const Mono& m = arg.monos[0];
    Poly sum = p == q ? Poly{} : nf_.factor(func("log")(m.coeff));
    Mono rest{c.real_val(1), m.binders, {}};
    for (const auto& f : m.factors) {
      bool bound = false;
      for (const auto& b : m.binders) bound = bound || NormalForm::mentions(f, b.var);
      if (!bound && is_app_of(f, exp)) {
        sum = nf_.add(sum, nf_.factor(f.arg(0)));
      } else if (!bound && f.is_app() && f.decl().decl_kind() == Z3_OP_DIV &&
                 f.arg(0).is_numeral() && f.arg(0).get_decimal_string(0) == "1" &&
                 is_app_of(f.arg(1), exp)) {
        sum = nf_.add(sum, nf_.neg(nf_.factor(f.arg(1).arg(0))));
      } else {
        rest.factors.push_back(f);
      }
    }
    if (rest.factors.empty() && rest.binders.empty()) return sum;
    z3::expr r = nf_.to_z3(Poly{{rest}}).simplify();
    require(r > c.real_val(0));
    return nf_.add(sum, nf_.factor(func("log")(r)));
  }
  z3::expr x = nf_.to_z3(arg).simplify();
  require(x > c.real_val(0));
  return nf_.factor(func("log")(x));
}

}  // namespace ts::verify

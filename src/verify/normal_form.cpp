#include "normal_form.h"

#include <algorithm>
#include <numeric>

#include "tilesweep/base/hash.h"

namespace ts::verify {

namespace {

bool is_var_const(const z3::expr& e) { return e.is_app() && e.num_args() == 0 && e.is_int(); }

void collect_vars(const z3::expr& e, std::set<std::string>& out) {
  if (!e.is_app()) return;
  if (is_var_const(e) && e.decl().decl_kind() == Z3_OP_UNINTERPRETED) {
    out.insert(e.decl().name().str());
    return;
  }
  for (unsigned i = 0; i < e.num_args(); ++i) collect_vars(e.arg(i), out);
}

// Simplified with the arguments of sums in a fixed order, so that `k + N` and `N + k` meet.
z3::expr canonical(const z3::expr& e) {
  z3::params p(e.ctx());
  p.set("sort_sums", true);
  return e.simplify(p);
}

bool mono_mentions(const Mono& m, const std::string& var) {
  for (const auto& f : m.factors)
    if (NormalForm::mentions(f, var)) return true;
  for (const auto& b : m.binders)
    if (NormalForm::mentions(b.extent, var)) return true;
  return false;
}

}  // namespace

bool is_shared_name(const std::string& name) {
  return name.rfind(kDimPrefix, 0) == 0 || name.rfind(kIndexPrefix, 0) == 0;
}

bool NormalForm::mentions(const z3::expr& e, const std::string& var) {
  if (!e.is_app()) return false;
  if (e.num_args() == 0) return e.decl().name().str() == var;
  for (unsigned i = 0; i < e.num_args(); ++i)
    if (mentions(e.arg(i), var)) return true;
  return false;
}

Poly NormalForm::constant(const z3::expr& c) {
  Poly p;
  if (c.is_numeral() && c.get_decimal_string(0) == "0") return p;
  p.monos.push_back(Mono{c, {}, {}});
  return p;
}

Poly NormalForm::factor(const z3::expr& t) {
  Poly p;
  p.monos.push_back(Mono{ctx_.real_val(1), {}, {t}});
  return p;
}

Poly NormalForm::add(const Poly& a, const Poly& b) {
  Poly r = a;
  r.monos.insert(r.monos.end(), b.monos.begin(), b.monos.end());
  return r;
}

Poly NormalForm::neg(const Poly& a) {
  Poly r = a;
  for (auto& m : r.monos) m.coeff = (-m.coeff).simplify();
  return r;
}

z3::expr NormalForm::fresh_binder() {
  return ctx_.int_const(("b!" + std::to_string(next_binder_++)).c_str());
}

Mono NormalForm::rename_binders(const Mono& m) {
  if (m.binders.empty()) return m;
  z3::expr_vector from(ctx_), to(ctx_);
  Mono r = m;
  for (auto& b : r.binders) {
    z3::expr nv = fresh_binder();
    from.push_back(ctx_.int_const(b.var.c_str()));
    to.push_back(nv);
    b.var = nv.decl().name().str();
  }
  for (auto& b : r.binders) b.extent = b.extent.substitute(from, to);
  for (auto& f : r.factors) f = f.substitute(from, to);
  return r;
}

Poly NormalForm::mul(const Poly& a, const Poly& b) {
  Poly r;
  for (const auto& x : a.monos) {
    for (const auto& y0 : b.monos) {
      Mono y = rename_binders(y0);  // keep the two products' bound variables apart
      Mono m{(x.coeff * y.coeff).simplify(), x.binders, x.factors};
      m.binders.insert(m.binders.end(), y.binders.begin(), y.binders.end());
      m.factors.insert(m.factors.end(), y.factors.begin(), y.factors.end());
      r.monos.push_back(std::move(m));
    }
  }
  return r;
}

Poly NormalForm::bracket(const z3::expr& c) {
  z3::expr s = c.simplify();
  if (s.is_true()) return constant(ctx_.real_val(1));
  if (s.is_false()) return Poly{};
  return factor(z3::ite(s, ctx_.real_val(1), ctx_.real_val(0)));
}

Poly NormalForm::select(const z3::expr& c, const Poly& a, const Poly& b) {
  return add(mul(bracket(c), a), mul(bracket(!c), b));
}

Poly NormalForm::sum(const z3::expr& var, const z3::expr& extent, const Poly& body) {
  std::string name = var.decl().name().str();
  z3::expr n = extent.simplify();
  Poly r;
  for (const auto& m : body.monos) {
    if (!mono_mentions(m, name)) {
      Mono scaled = m;
      scaled.factors.push_back(z3::to_real(n));
      r.monos.push_back(std::move(scaled));
      continue;
    }
    z3::expr_vector from(ctx_), to(ctx_);
    from.push_back(var);
    if (n.is_numeral() && n.get_decimal_string(0) == "1") {
      to.push_back(ctx_.int_val(0));  // a sum over one element
    } else {
      to.push_back(fresh_binder());
    }
    Mono b = m;
    for (auto& bb : b.binders) bb.extent = bb.extent.substitute(from, to);
    for (auto& f : b.factors) f = f.substitute(from, to);
    if (!(n.is_numeral() && n.get_decimal_string(0) == "1"))
      b.binders.push_back(Binder{to[0].decl().name().str(), n});
    r.monos.push_back(std::move(b));
  }
  return r;
}

Poly NormalForm::reduce_atom(const char* kind, const z3::expr& var, const z3::expr& extent,
                             const Poly& body) {
  std::string name = var.decl().name().str();
  std::string k = kind;
  if (k == "min") return neg(reduce_atom("max", var, extent, neg(body)));  // min x = -max(-x)
  Poly inner, outer;
  for (const auto& m : body.monos) {
    bool split = (k == "max" || k == "min") && !mono_mentions(m, name);
    (split ? outer : inner).monos.push_back(m);
  }
  if (inner.monos.empty() && k != "prod") return outer;  // max of a constant (non-empty range)
  if (k == "prod") {
    // A product of ones is 1 over any range, the empty one included (a scan whose multiplier
    // is all ones is a cumulative sum).
    bool varies = false;
    for (const auto& m : inner.monos) varies = varies || mono_mentions(m, name);
    z3::expr value = to_z3(inner).simplify();
    if (!varies && value.is_numeral() && value.get_decimal_string(0) == "1")
      return constant(ctx_.real_val(1));
  }
  // max(s a) = s max(a) for s > 0: the largest coefficient magnitude is taken out, so that
  // max(2 x) and 2 max(x) meet.
  z3::expr scale = ctx_.real_val(1);
  if (k == "max") {
    bool first = true;
    for (const auto& m : inner.monos) {
      z3::expr magnitude = z3::abs(m.coeff).simplify();
      if (first || (magnitude > scale).simplify().is_true()) scale = magnitude;
      first = false;
    }
    if (!(scale > 0).simplify().is_true()) scale = ctx_.real_val(1);
    for (auto& m : inner.monos) m.coeff = (m.coeff / scale).simplify();
  }
  z3::expr b = fresh_binder();
  z3::expr_vector from(ctx_), to(ctx_);
  from.push_back(var);
  to.push_back(b);
  z3::expr body_term = to_z3(inner).substitute(from, to);
  z3::expr a = atom(k, {Binder{b.decl().name().str(), extent.simplify()}}, {body_term});
  Poly scaled = factor(a);
  scaled.monos[0].coeff = scale;
  return add(scaled, outer);
}

std::string NormalForm::canonical_key(const std::string& kind, const std::vector<Binder>& binders,
                                      const std::vector<z3::expr>& factors,
                                      const std::vector<int>& order,
                                      const std::vector<std::string>& locals,
                                      const std::vector<int>& local_order) {
  z3::expr_vector from(ctx_), to(ctx_);
  for (std::size_t i = 0; i < order.size(); ++i) {
    from.push_back(ctx_.int_const(binders[order[i]].var.c_str()));
    to.push_back(ctx_.int_const(("c!" + std::to_string(i)).c_str()));
  }
  for (std::size_t i = 0; i < local_order.size(); ++i) {
    from.push_back(ctx_.int_const(locals[local_order[i]].c_str()));
    to.push_back(ctx_.int_const(("f!" + std::to_string(i)).c_str()));
  }
  std::string key = kind + "[";
  for (std::size_t i = 0; i < order.size(); ++i)
    key += (i ? "," : "") +
           canonical(z3::expr(binders[order[i]].extent).substitute(from, to)).to_string();
  key += "](";
  std::vector<std::string> fs;
  for (z3::expr f : factors) fs.push_back(canonical(f.substitute(from, to)).to_string());
  std::sort(fs.begin(), fs.end());
  for (std::size_t i = 0; i < fs.size(); ++i) key += (i ? " * " : "") + fs[i];
  return key + ")";
}

z3::expr NormalForm::atom(const std::string& kind, const std::vector<Binder>& binders,
                          const std::vector<z3::expr>& factors) {
  // The atom's value depends on the free variables it mentions: they are its arguments, so
  // that enclosing sums see the dependence. Dims and output indices are named alike on both
  // sides of a query; the variables of enclosing reductions are not (each side has its own
  // prefix), so they are named by position in the key, and passed in that order: the same
  // reduction written on both sides is then the same function.
  std::set<std::string> bound, vars;
  for (const auto& b : binders) bound.insert(b.var);
  for (const auto& f : factors) collect_vars(f, vars);
  for (const auto& b : binders) collect_vars(b.extent, vars);
  std::vector<std::string> shared, locals;
  for (const auto& v : vars) {
    if (bound.count(v)) continue;
    (is_shared_name(v) ? shared : locals).push_back(v);
  }
  std::vector<int> order(binders.size()), local_order(locals.size());
  std::iota(order.begin(), order.end(), 0);
  std::iota(local_order.begin(), local_order.end(), 0);
  std::string best;
  std::vector<int> best_local = local_order;
  // Try every naming of the bound and of the local variables (a few of each); the smallest
  // text is the canonical form.
  bool permute = binders.size() <= 5, permute_locals = locals.size() <= 3;
  do {
    do {
      std::string k = canonical_key(kind, binders, factors, order, locals, local_order);
      if (best.empty() || k < best) {
        best = k;
        best_local = local_order;
      }
    } while (permute && std::next_permutation(order.begin(), order.end()));
  } while (permute_locals && std::next_permutation(local_order.begin(), local_order.end()));
  z3::expr_vector args(ctx_);
  z3::sort_vector sorts(ctx_);
  for (int i : best_local) {
    args.push_back(ctx_.int_const(locals[i].c_str()));
    sorts.push_back(ctx_.int_sort());
  }
  for (const auto& v : shared) {
    args.push_back(ctx_.int_const(v.c_str()));
    sorts.push_back(ctx_.int_sort());
  }
  std::string fname = kind + "!" + std::to_string(hash_bytes(best));
  auto it = atoms_.find(fname);
  if (it == atoms_.end())
    it = atoms_.emplace(fname, ctx_.function(fname.c_str(), sorts, ctx_.real_sort())).first;
  return it->second(args);
}

z3::expr NormalForm::to_z3(const Poly& p) {
  z3::expr total = ctx_.real_val(0);
  for (const auto& m : p.monos) {
    z3::expr term = m.coeff;
    std::vector<z3::expr> dependent;
    for (const auto& f : m.factors) {
      bool dep = false;
      for (const auto& b : m.binders) dep = dep || mentions(f, b.var);
      if (dep)
        dependent.push_back(f);
      else
        term = term * f;
    }
    if (!m.binders.empty()) {
      if (dependent.empty()) dependent.push_back(ctx_.real_val(1));
      term = term * atom("sum", m.binders, dependent);
    }
    total = total + term;
  }
  return total;
}

}  // namespace ts::verify

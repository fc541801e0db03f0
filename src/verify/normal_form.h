// Sums of products with bound summation variables: the normal form in which reductions are
// compared. A monomial is `coeff * sum_{binders} prod(factors)`, where factors are real Z3 terms
// (loads, uninterpreted function applications, reciprocals, indicator brackets). Every rewrite
// here is a sound identity of finite sums over the reals:
//   sum(a + b) = sum(a) + sum(b)        sum(c * a) = c * sum(a)   (c not mentioning the variable)
//   sum(c) = n * c                      (sum_k a)(sum_j b) = sum_k sum_j a * b   (j, k fresh)
//   ite(c, a, b) = [c] a + [not c] b    sums over one element: sum_{k<1} a = a[k := 0]
//   max(c + a) = c + max(a)  (non-empty range)     min(a) = -max(-a)     prod(1) = 1
//   max(s a) = s max(a)      (s > 0 the largest coefficient magnitude of the body)
// A monomial with binders is finally abstracted by its canonical form (binders renamed in the
// order that gives the smallest text), so equal sums written differently meet.
#pragma once

#include <z3++.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace ts::verify {

// Names of the Z3 constants shared by both sides of a query. Every internal name carries a '!'
// (no kernel-language identifier can), so a user's dim named `i0` or `b` never meets an output
// index, a reduction variable or a binder.
inline constexpr const char* kDimPrefix = "dim!";
inline constexpr const char* kIndexPrefix = "idx!";
bool is_shared_name(const std::string& name);  // a dim or an output index

struct Binder {
  std::string var;
  z3::expr extent;  // Int
};

struct Mono {
  z3::expr coeff;  // a real numeral
  std::vector<Binder> binders;
  std::vector<z3::expr> factors;
};

struct Poly {
  std::vector<Mono> monos;
};

class NormalForm {
 public:
  explicit NormalForm(z3::context& ctx) : ctx_(ctx) {}

  Poly constant(const z3::expr& real_numeral);
  Poly factor(const z3::expr& real_term);
  Poly add(const Poly& a, const Poly& b);
  Poly neg(const Poly& a);
  Poly mul(const Poly& a, const Poly& b);
  Poly bracket(const z3::expr& condition);  // 1 where the condition holds, else 0
  Poly select(const z3::expr& condition, const Poly& a, const Poly& b);
  // sum over `var` in [0, extent) of body; `var` is an Int constant of this context.
  Poly sum(const z3::expr& var, const z3::expr& extent, const Poly& body);
  // max/min/prod over `var` in [0, extent), as an abstract atom (max/min with a non-empty
  // range: an additive part independent of `var` is taken out).
  Poly reduce_atom(const char* kind, const z3::expr& var, const z3::expr& extent, const Poly& body);

  // The real Z3 term of a normal form; monomials with binders become canonical atoms.
  z3::expr to_z3(const Poly& p);

  // Does `e` mention the Int constant named `var` (directly or as an atom's argument)?
  static bool mentions(const z3::expr& e, const std::string& var);

 private:
  z3::expr fresh_binder();
  Mono rename_binders(const Mono& m);
  z3::expr atom(const std::string& kind, const std::vector<Binder>& binders,
                const std::vector<z3::expr>& factors);
  std::string canonical_key(const std::string& kind, const std::vector<Binder>& binders,
                            const std::vector<z3::expr>& factors, const std::vector<int>& order,
                            const std::vector<std::string>& locals,
                            const std::vector<int>& local_order);

  z3::context& ctx_;
  int next_binder_ = 0;
  std::map<std::string, z3::func_decl> atoms_;
};

}  // namespace ts::verify

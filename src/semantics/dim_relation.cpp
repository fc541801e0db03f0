#include "tilesweep/semantics/dim_relation.h"

#include <cstdlib>
#include <map>
#include <numeric>
#include <vector>

namespace ts::sem {

namespace {

using Atoms = std::vector<Dim::AtomPtr>;

Dim atom_dim(const Dim::AtomPtr& a) {
  return a->symbol.empty() ? floordiv(a->num, a->den) : Dim::symbol(a->symbol);
}

// How often each atom occurs in a monomial.
std::map<std::string, int> counts(const Atoms& atoms) {
  std::map<std::string, int> c;
  for (const auto& a : atoms) ++c[a->key];
  return c;
}

// `d` divided by the monomial and the integer every term shares (dims are >= 1, so the common
// factor is never 0 and dividing it out keeps the solutions of d == 0).
Dim reduced(const Dim& d) {
  std::map<std::string, int> common;
  std::int64_t g = 0;
  bool first = true;
  for (const auto& [k, t] : d.terms()) {
    g = std::gcd(g, std::llabs(t.coeff));
    std::map<std::string, int> c = counts(t.atoms);
    if (first) {
      common = c;
      first = false;
      continue;
    }
    for (auto it = common.begin(); it != common.end();) {
      auto jt = c.find(it->first);
      if (jt == c.end()) {
        it = common.erase(it);
        continue;
      }
      it->second = std::min(it->second, jt->second);
      ++it;
    }
  }
  if (g == 0) return d;
  Dim out;
  for (const auto& [k, t] : d.terms()) {
    std::map<std::string, int> drop = common;
    Dim m(t.coeff / g);
    for (const auto& a : t.atoms) {
      auto it = drop.find(a->key);
      if (it != drop.end() && it->second > 0) {
        --it->second;
        continue;
      }
      m = m * atom_dim(a);
    }
    out = out + m;
  }
  return out;
}

// The terms of `d` with a positive (sign > 0) or negative coefficient, as a positive sum.
Dim side(const Dim& d, int sign) {
  Dim out;
  for (const auto& [k, t] : d.terms()) {
    if ((t.coeff > 0) != (sign > 0)) continue;
    Dim m(sign > 0 ? t.coeff : -t.coeff);
    for (const auto& a : t.atoms) m = m * atom_dim(a);
    out = out + m;
  }
  return out;
}

bool is_symbol(const Dim& d) {
  auto s = d.symbols();
  return s.size() == 1 && d == Dim::symbol(s[0]);
}

// No integers satisfy sum(c_i * m_i) + c0 == 0 when the gcd of the c_i does not divide c0.
bool indivisible(const Dim& d) {
  std::int64_t g = 0, c0 = 0;
  for (const auto& [k, t] : d.terms()) {
    if (t.atoms.empty())
      c0 = t.coeff;
    else
      g = std::gcd(g, std::llabs(t.coeff));
  }
  return g > 1 && c0 % g != 0;
}

}  // namespace

DimRelation relate(const Dim& a, const Dim& b) {
  DimRelation r;
  Dim d = a - b;
  if (d.is_const()) {
    r.kind = d.value() == 0 ? DimRelation::Always : DimRelation::Never;
    return r;
  }
  d = reduced(d);
  r.lhs = side(d, 1);
  r.rhs = side(d, -1);
  // A dim alone goes left; otherwise the side with fewer terms, so both orders print alike.
  bool swap = is_symbol(r.rhs) && !is_symbol(r.lhs);
  if (is_symbol(r.lhs) == is_symbol(r.rhs))
    swap = r.rhs.terms().size() < r.lhs.terms().size() ||
           (r.rhs.terms().size() == r.lhs.terms().size() && r.rhs.key() < r.lhs.key());
  if (swap) std::swap(r.lhs, r.rhs);
  if (d.is_const() || (d - Dim(1)).provably_nonneg() || (-d - Dim(1)).provably_nonneg() ||
      indivisible(d))
    r.kind = DimRelation::Never;
  else if (is_symbol(r.lhs) && (is_symbol(r.rhs) || r.rhs.is_const()))
    r.kind = DimRelation::Renaming;
  else
    r.kind = DimRelation::Relation;
  return r;
}

}  // namespace ts::sem

#include "tilesweep/semantics/dim.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "tilesweep/base/error.h"

namespace ts::sem {

namespace {

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw UserError(
        fmt::format("dim arithmetic overflows 64-bit integers ({} + {}); use smaller sizes", a, b));
  return r;
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw UserError(
        fmt::format("dim arithmetic overflows 64-bit integers ({} * {}); use smaller sizes", a, b));
  return r;
}

bool needs_parens(const Dim& d) { return d.str().find_first_of("+-*/ ") != std::string::npos; }

}  // namespace

Dim::Dim(std::int64_t value) : key_(std::to_string(value)) {  // what finish() writes for it
  if (value != 0) terms_[""] = Term{{}, value};
}

Dim Dim::symbol(const std::string& name) {
  auto atom = std::make_shared<Atom>();
  atom->key = name;
  atom->symbol = name;
  Dim d;
  d.add_term({atom}, 1);
  d.finish();
  return d;
}

std::string Dim::mono_key(const std::vector<AtomPtr>& atoms) {
  std::string k;
  for (const auto& a : atoms) {
    if (!k.empty()) k += " * ";
    k += a->symbol.empty() ? "(" + a->key + ")" : a->key;
  }
  return k;
}

void Dim::add_term(const std::vector<AtomPtr>& atoms, std::int64_t coeff) {
  std::string k = mono_key(atoms);
  auto [it, inserted] = terms_.try_emplace(k, Term{atoms, 0});
  it->second.coeff = checked_add(it->second.coeff, coeff);
  if (it->second.coeff == 0) terms_.erase(it);
}

void Dim::finish() {
  // Highest degree first, positive terms before negative ones, the constant last:
  // "M * N + 2 * K - N // 2 + 1". A floor division stands alone unparenthesized only when it
  // is a whole term with coefficient 1.
  std::vector<const Term*> order;
  for (auto& [k, t] : terms_) order.push_back(&t);
  std::stable_sort(order.begin(), order.end(), [](const Term* a, const Term* b) {
    if (a->atoms.empty() != b->atoms.empty()) return b->atoms.empty();
    if ((a->coeff > 0) != (b->coeff > 0)) return a->coeff > 0;
    return a->atoms.size() > b->atoms.size();
  });
  std::string s;
  for (const Term* t : order) {
    std::int64_t c = t->coeff;
    std::int64_t mag = c < 0 ? -c : c;
    std::string mono = mono_key(t->atoms);
    if (t->atoms.size() == 1 && t->atoms[0]->symbol.empty() && mag == 1) mono = t->atoms[0]->key;
    if (s.empty()) {
      if (c < 0) s += "-";
    } else {
      s += c < 0 ? " - " : " + ";
    }
    if (mono.empty()) {
      s += std::to_string(mag);
    } else {
      if (mag != 1) s += std::to_string(mag) + " * ";
      s += mono;
    }
  }
  key_ = s.empty() ? "0" : s;
}

Dim operator+(const Dim& a, const Dim& b) {
  Dim r = a;
  for (auto& [k, t] : b.terms_) r.add_term(t.atoms, t.coeff);
  r.finish();
  return r;
}

Dim Dim::operator-() const { return Dim(0) - *this; }

Dim operator-(const Dim& a, const Dim& b) {
  Dim r = a;
  for (auto& [k, t] : b.terms_) r.add_term(t.atoms, checked_mul(t.coeff, -1));
  r.finish();
  return r;
}

Dim operator*(const Dim& a, const Dim& b) {
  Dim r;
  for (auto& [ka, ta] : a.terms_) {
    for (auto& [kb, tb] : b.terms_) {
      std::vector<Dim::AtomPtr> atoms = ta.atoms;
      atoms.insert(atoms.end(), tb.atoms.begin(), tb.atoms.end());
      std::sort(atoms.begin(), atoms.end(), [](auto& x, auto& y) { return x->key < y->key; });
      r.add_term(atoms, checked_mul(ta.coeff, tb.coeff));
    }
  }
  r.finish();
  return r;
}

Dim floordiv(const Dim& a, const Dim& b) {
  TS_CHECK(!(b.is_const() && b.value() == 0), "floor division of {} by zero", a.str());
  if (b.is_const()) {
    std::int64_t d = b.value();
    if (d == 1) return a;
    if (d > 0) {
      // a = d * q + r with every coefficient of r in [0, d): a // d = q + r // d.
      Dim q, r;
      for (auto& [k, t] : a.terms_) {
        std::int64_t cq = floor_div(t.coeff, d);
        q.add_term(t.atoms, cq);
        r.add_term(t.atoms, checked_add(t.coeff, -checked_mul(cq, d)));
      }
      q.finish();
      r.finish();
      if (r.is_const()) return q + Dim(floor_div(r.value(), d));
      if (!q.terms_.empty()) return q + floordiv(r, b);
    }
  } else if (a == b) {
    return Dim(1);
  }
  if (a.is_const() && a.value() == 0) return Dim(0);
  auto atom = std::make_shared<Dim::Atom>();
  atom->num = a;
  atom->den = b;
  atom->key = (needs_parens(a) ? "(" + a.str() + ")" : a.str()) + " // " +
              (needs_parens(b) ? "(" + b.str() + ")" : b.str());
  Dim r;
  r.add_term({atom}, 1);
  r.finish();
  return r;
}

bool Dim::is_const() const {
  return terms_.empty() || (terms_.size() == 1 && terms_.begin()->first.empty());
}

std::int64_t Dim::value() const {
  TS_CHECK(is_const(), "dim {} is not a constant", str());
  return terms_.empty() ? 0 : terms_.begin()->second.coeff;
}

bool Dim::has_floordiv() const {
  for (auto& [k, t] : terms_)
    for (auto& a : t.atoms)
      if (a->symbol.empty()) return true;
  return false;
}

std::vector<std::string> Dim::symbols() const {
  std::set<std::string> names;
  for (auto& [k, t] : terms_) {
    for (auto& a : t.atoms) {
      if (!a->symbol.empty()) {
        names.insert(a->symbol);
        continue;
      }
      for (auto& n : a->num.symbols()) names.insert(n);
      for (auto& n : a->den.symbols()) names.insert(n);
    }
  }
  return {names.begin(), names.end()};
}

bool Dim::provably_nonneg() const {
  // Every symbol is at least 1 and every floor division (of sizes) at least 0, so a term with
  // a positive coefficient contributes at least its coefficient (symbols only) or 0.
  std::int64_t low = 0;
  for (auto& [k, t] : terms_) {
    if (t.atoms.empty()) {
      low += t.coeff;
      continue;
    }
    if (t.coeff < 0) return false;
    bool symbols_only = true;
    for (auto& a : t.atoms) symbols_only = symbols_only && !a->symbol.empty();
    if (symbols_only) low += t.coeff;
  }
  return low >= 0;
}

std::optional<std::int64_t> Dim::evaluate(const DimEnv& env) const {
  std::int64_t sum = 0;
  for (auto& [k, t] : terms_) {
    std::int64_t prod = t.coeff;
    for (auto& a : t.atoms) {
      std::int64_t v;
      if (!a->symbol.empty()) {
        auto it = env.find(a->symbol);
        if (it == env.end()) return std::nullopt;
        v = it->second;
      } else {
        auto n = a->num.evaluate(env), d = a->den.evaluate(env);
        if (!n || !d || *d == 0) return std::nullopt;
        v = floor_div(*n, *d);
      }
      prod *= v;
    }
    sum += prod;
  }
  return sum;
}

std::string Dim::str() const { return key_; }
const std::string& Dim::key() const { return key_; }

std::string format_shape(const std::vector<Dim>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + shape[i].str();
  return s + "]";
}

}  // namespace ts::sem

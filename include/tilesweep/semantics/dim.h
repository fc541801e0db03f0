// Symbolic dimension sizes: integer polynomials over named dims (M, N, ...) and floor
// divisions, kept in a canonical form so that structurally equal sizes compare equal
// (`2 * (N // 2) + M` == `M + 2 * (N // 2)`, `(2 * N) // 2` == `N`).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ts::sem {

using DimEnv = std::map<std::string, std::int64_t>;

class Dim {
 public:
  Dim() = default;
  Dim(std::int64_t value);  // NOLINT: implicit, a constant size
  static Dim symbol(const std::string& name);

  friend Dim operator+(const Dim& a, const Dim& b);
  friend Dim operator-(const Dim& a, const Dim& b);
  friend Dim operator*(const Dim& a, const Dim& b);
  Dim operator-() const;
  // Python floor division; `b` must not be the constant 0.
  friend Dim floordiv(const Dim& a, const Dim& b);

  friend bool operator==(const Dim& a, const Dim& b) { return a.key() == b.key(); }
  friend bool operator<(const Dim& a, const Dim& b) { return a.key() < b.key(); }

  bool is_const() const;
  // The constant value; only valid when is_const().
  std::int64_t value() const;
  // True when some floor division remains after simplification: equality with such a size may
  // hold for some values of the dims only (divisibility), so it becomes a precondition.
  bool has_floordiv() const;
  // True when the value is >= 0 for every assignment of dims >= 1 (a sufficient check).
  bool provably_nonneg() const;
  // Names of all dims it mentions, sorted.
  std::vector<std::string> symbols() const;
  // Evaluates with the dims bound by env; nullopt when a dim is unbound or a division is by 0.
  std::optional<std::int64_t> evaluate(const DimEnv& env) const;

  std::string str() const;
  // Canonical text used for comparison and hashing.
  const std::string& key() const;

  struct Atom;
  using AtomPtr = std::shared_ptr<const Atom>;
  struct Term {
    std::vector<AtomPtr> atoms;  // sorted by key; empty for the constant term
    std::int64_t coeff = 0;
  };
  // The polynomial: sum of coeff * product of atoms (for encoders that rebuild it elsewhere).
  const std::map<std::string, Term>& terms() const { return terms_; }

 private:
  static std::string mono_key(const std::vector<AtomPtr>& atoms);
  void add_term(const std::vector<AtomPtr>& atoms, std::int64_t coeff);
  void finish();

  std::map<std::string, Term> terms_;  // monomial key -> term; no zero coefficients
  std::string key_ = "0";
};

// A symbol (`M`) or a floor division (`num // den`) that does not simplify further.
struct Dim::Atom {
  std::string key;
  std::string symbol;  // set for a symbol
  Dim num, den;        // set for a floor division
};

std::string format_shape(const std::vector<Dim>& shape);

}  // namespace ts::sem

// Reductions: a range whose extent is a sum of dims is split into its parts (sum over [0, N + P)
// = sum over [0, N) + sum over [N, N + P); max = the larger of the parts' maxima), each part
// is put in normal form, and conditions inside a part are settled by its range when they can be.
#include <fmt/format.h>

#include "encoder.h"

namespace ts::verify {

namespace {

constexpr std::int64_t kUnrolledExtent = 8;

bool is_dim(const z3::expr& t) {
  return t.is_app() && t.num_args() == 0 && t.is_int() && is_shared_name(t.decl().name().str());
}

// A product of dims: at least 1 for every valid assignment.
bool positive(const z3::expr& t) {
  if (is_dim(t)) return true;
  if (!t.is_app() || t.decl().decl_kind() != Z3_OP_MUL) return false;
  for (unsigned i = 0; i < t.num_args(); ++i)
    if (!is_dim(t.arg(i))) return false;
  return true;
}

// The parts of a reduction's extent when it is a sum of products of dims and small numerals
// (`N + P`, `2 * K`, `N + 1`), in the order of the extent's terms, a numeral k as k parts of one
// element (a scan's product up to a dim-valued column, `prod(l <= N)`, peels its element N + 1);
// anything else is one part. Every part is at least 1.
std::vector<z3::expr> extent_parts(z3::context& ctx, const z3::expr& extent) {
  std::vector<z3::expr> terms, parts;
  if (extent.is_app() && extent.decl().decl_kind() == Z3_OP_ADD) {
    for (unsigned i = 0; i < extent.num_args(); ++i) terms.push_back(extent.arg(i));
  } else {
    terms.push_back(extent);
  }
  for (const auto& t : terms) {
    std::int64_t ones = 0;
    if (t.is_numeral_i64(ones) && ones >= 1 && ones <= 8) {
      for (std::int64_t i = 0; i < ones; ++i) parts.push_back(ctx.int_val(1));
      continue;
    }
    std::int64_t copies = 1;
    z3::expr base = t;
    if (t.is_app() && t.decl().decl_kind() == Z3_OP_MUL && t.num_args() == 2 &&
        t.arg(0).is_numeral_i64(copies))
      base = t.arg(1);
    if (!positive(base) || copies < 1 || copies > 8) return {extent};
    for (std::int64_t c = 0; c < copies; ++c) parts.push_back(base);
  }
  return parts;
}

z3::expr conjunction(z3::context& c, const std::vector<z3::expr>& xs) {
  z3::expr all = c.bool_val(true);
  for (const auto& x : xs) all = all && x;
  return all.simplify();
}

}  // namespace

Encoder::Val Encoder::reduce(const ir::Node& n, const sem::TermNode& tn, Vars& vars,
                             const std::vector<z3::expr>& index) {
  z3::context& c = sym_.ctx();
  z3::expr extent = as_int(term(n, tn.args[0], vars, index), n).simplify();
  std::vector<z3::expr> parts = extent_parts(c, extent);
  // A literal range of a few elements (a reduction over a concat of per-row values, as a split
  // reduction's fold: split_reduction.h; a scan's product at a literal index: chunked_scan.h) is
  // unrolled: the reducer over its elements, one element its body, and an empty sum or product
  // the reducer's identity (an empty max or min has none: it stays abstract).
  std::int64_t count = 0;
  bool literal = extent.is_numeral_i64(count);
  if (literal && count == 0 && tn.reducer == sem::Reducer::Sum)
    return real(nf_.constant(c.real_val(0)));
  if (literal && count == 0 && tn.reducer == sem::Reducer::Prod)
    return real(nf_.constant(c.real_val(1)));
  bool unroll = literal && count >= 1 && count <= kUnrolledExtent;
  if (unroll) parts.assign(static_cast<std::size_t>(count), c.int_val(1));
  z3::expr saved = vars[tn.var];
  z3::expr offset = c.int_val(0);
  std::vector<Poly> values;
  for (const auto& part : parts) {
    std::int64_t one = 0;
    if (unroll || (part.is_numeral_i64(one) && one == 1)) {
      vars[tn.var] = offset;
      values.push_back(as_real(term(n, tn.args[1], vars, index)));
    } else {
      values.push_back(reduce_piece(n, tn, vars, index, parts.size() > 1, offset, part));
    }
    offset = (offset + part).simplify();
  }
  vars[tn.var] = saved;
  Poly total = values[0];
  for (std::size_t i = 1; i < values.size(); ++i) {
    switch (tn.reducer) {
      case sem::Reducer::Sum:
        total = nf_.add(total, values[i]);
        break;
      case sem::Reducer::Prod:
        total = nf_.mul(total, values[i]);
        break;
      case sem::Reducer::Max:
      case sem::Reducer::Min: {
        // The same term as maximum(a, b) / minimum(a, b) of the two parts' reductions.
        z3::expr a = nf_.to_z3(total).simplify(), b = nf_.to_z3(values[i]).simplify();
        bool max = tn.reducer == sem::Reducer::Max;
        total = nf_.factor(z3::ite(max ? a >= b : a <= b, a, b));
        break;
      }
    }
  }
  return real(total);
}

// One part [offset, offset + extent) of a reduction (not `split`: the whole range, offset 0).
Poly Encoder::reduce_piece(const ir::Node& n, const sem::TermNode& tn, Vars& vars,
                           const std::vector<z3::expr>& index, bool split, const z3::expr& offset,
                           const z3::expr& extent) {
  z3::context& c = sym_.ctx();
  z3::expr var = c.int_const(fmt::format("{}r{}", prefix_, next_var_++).c_str());
  vars[tn.var] = split ? (var + offset).simplify() : var;
  if (split) split_ranges_.push_back(Range{var, extent});
  std::vector<z3::expr> inner, *outer = conditions_;
  conditions_ = &inner;
  Poly body = as_real(term(n, tn.args[1], vars, index));
  conditions_ = outer;
  if (split) split_ranges_.pop_back();
  // Defined when the body is, for every value of the variable: conditions that do not mention
  // it hold when the range is not empty; the others become an abstract "for all" reduction.
  std::string name = var.decl().name().str();
  std::vector<z3::expr> constant, varying;
  for (const auto& cond : inner)
    (NormalForm::mentions(cond, name) ? varying : constant).push_back(cond);
  if (!constant.empty()) require(extent <= 0 || conjunction(c, constant));
  if (!varying.empty()) {
    z3::expr all =
        nf_.to_z3(nf_.reduce_atom("all", var, extent, nf_.bracket(conjunction(c, varying))));
    require(all == c.real_val(1));
  }
  switch (tn.reducer) {
    case sem::Reducer::Sum:
      return nf_.sum(var, extent, body);
    case sem::Reducer::Prod:
      return nf_.reduce_atom("prod", var, extent, body);
    case sem::Reducer::Max:
      return nf_.reduce_atom("max", var, extent, body);
    case sem::Reducer::Min:
      return nf_.reduce_atom("min", var, extent, body);
  }
  return body;
}

z3::expr Encoder::settle(const z3::expr& cond) {
  z3::expr c = cond.simplify();
  if (c.is_true() || c.is_false() || split_ranges_.empty()) return c;
  bool mentioned = false;
  for (const auto& r : split_ranges_)
    mentioned = mentioned || NormalForm::mentions(c, r.var.decl().name().str());
  if (!mentioned) return c;
  z3::context& ctx = sym_.ctx();
  z3::solver s(ctx);
  z3::params p(ctx);
  p.set("rlimit", 200000u);  // deterministic: a cheap check or none
  s.set(p);
  for (const auto& [name, d] : sym_.dims()) s.add(d >= 1);
  for (const auto& r : split_ranges_) s.add(r.var >= 0 && r.var < r.extent);
  s.push();
  s.add(!c);
  bool always = s.check() == z3::unsat;
  s.pop();
  if (always) return ctx.bool_val(true);
  s.add(c);
  if (s.check() == z3::unsat) return ctx.bool_val(false);
  return c;
}

}  // namespace ts::verify

#include "tilesweep/verify/tile_skip.h"

#include <fmt/format.h>
#include <z3++.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>

namespace ts::verify {

namespace {

// An extended real: kind -1 (-inf), 0 (the finite real `val`), 1 (+inf).
struct XReal {
  z3::expr kind, val;
};

XReal finite(const z3::expr& v) { return {v.ctx().int_val(0), v}; }

XReal constant(z3::context& c, double x) {
  if (std::isinf(x)) return {c.int_val(x < 0 ? -1 : 1), c.real_val(0)};
  return {c.int_val(0), c.real_val(fmt::format("{:.17g}", x).c_str())};
}

XReal max(const XReal& a, const XReal& b) {
  z3::expr kind = z3::ite(a.kind == 1 || b.kind == 1, a.kind.ctx().int_val(1),
                          z3::ite(a.kind == -1, b.kind, a.kind));
  z3::expr val = z3::ite(a.kind == -1, b.val,
                         z3::ite(b.kind == -1, a.val, z3::ite(a.val >= b.val, a.val, b.val)));
  return {kind, val};
}

// a - m for a finite m: the infinities stay.
XReal minus_finite(const XReal& a, const z3::expr& m) { return {a.kind, a.val - m}; }

// exp over the extended reals: exp(-inf) = 0, exp(+inf) = +inf, exp(x) an unknown positive real
// (`e` is uninterpreted; its positivity is asserted where it is applied).
XReal exp(const XReal& a, const z3::func_decl& e, z3::solver& s) {
  z3::expr ex = e(a.val);
  s.add(ex > 0);
  z3::context& c = a.kind.ctx();
  return {z3::ite(a.kind == 1, c.int_val(1), c.int_val(0)),
          z3::ite(a.kind == -1, c.real_val(0), z3::ite(a.kind == 0, ex, c.real_val(0)))};
}

// acc + t * k for finite acc and k: defined (finite) only where t is finite.
XReal add_scaled(const z3::expr& acc, const XReal& t, const z3::expr& k) {
  return {t.kind, acc + t.val * k};
}

z3::expr same(const XReal& a, const XReal& b) {
  return a.kind == b.kind && (a.kind != 0 || a.val == b.val);
}

// True when `claim` holds under the solver's assertions (its negation is unsatisfiable).
bool holds(z3::solver& s, const z3::expr& claim, std::string& why) {
  s.push();
  s.add(!claim);
  z3::check_result r = s.check();
  if (r == z3::unknown) why = "unknown (" + s.reason_unknown() + ")";
  if (r == z3::sat) why = "counterexample " + s.get_model().to_string();
  s.pop();
  return r == z3::unsat;
}

std::string proved_masked(const TileMask& m, unsigned timeout_ms) {
  z3::context c;
  z3::solver s(c);
  s.set("timeout", timeout_ms);
  z3::expr i = c.int_const("i"), j = c.int_const("j"), P = c.int_const("P"), W = c.int_const("W"),
           p = c.int_const("p"), f = c.int_const("f");
  auto k = [&](std::int64_t v) { return c.int_val(static_cast<int64_t>(v)); };
  s.add(i >= 0 && j >= 0 && P >= 1 && W >= 1 && p >= 0 && p < P && f >= 0 && f < W);
  z3::expr offset = k(m.row) * i * P + k(m.col) * j * W + k(m.constant);
  z3::expr corner = k(std::max<std::int64_t>(0, m.channel_multiplier)) * (P - 1) +
                    k(std::max<std::int64_t>(0, m.step)) * (W - 1);
  s.add(offset + corner < 0);  // the guard fails
  z3::expr kept = offset + k(m.channel_multiplier) * p + k(m.step) * f + k(m.cross) * p * f >= 0;
  std::string why;
  if (!holds(s, !kept, why)) return "a tile the guard skips keeps an element: " + why;
  return "";
}

std::string proved_identity(Contribution into, double fill, unsigned timeout_ms) {
  z3::context c;
  z3::solver s(c);
  s.set("timeout", timeout_ms);
  XReal x = constant(c, fill);
  z3::func_decl e = c.function("exp", c.real_sort(), c.real_sort());
  z3::expr m = c.real_const("m"), l = c.real_const("l"), v = c.real_const("v"),
           a = c.real_const("acc");
  z3::expr claim = c.bool_val(true);
  switch (into) {
    case Contribution::Max: {
      XReal acc{c.int_const("acc_kind"), a};
      s.add(acc.kind >= -1 && acc.kind <= 1);
      claim = same(max(acc, x), acc);
      break;
    }
    case Contribution::SumExp:
      s.add(l >= 0);
      claim = same(add_scaled(l, exp(minus_finite(x, m), e, s), c.real_val(1)), finite(l));
      break;
    case Contribution::MatmulAccumulate:
      s.add(l > 0);
      claim = same(add_scaled(a, exp(minus_finite(x, m), e, s), v / l), finite(a));
      break;
    case Contribution::RescaledSumExp:
    case Contribution::RescaledMatmulAccumulate: {
      // m' = max(m, x) must be m (finite) for the rescaling exp(m - m') to be defined; then the
      // running value rescaled plus the tile's part is the running value.
      s.add(e(c.real_val(0)) == 1);
      XReal folded = max(finite(m), x);
      z3::expr run = into == Contribution::RescaledSumExp ? l : a;
      if (into == Contribution::RescaledSumExp) s.add(l >= 0);
      z3::expr k = into == Contribution::RescaledSumExp ? c.real_val(1) : v;
      z3::expr rescaled = run * e(m - folded.val);
      claim = same(folded, finite(m)) &&
              same(add_scaled(rescaled, exp(minus_finite(x, folded.val), e, s), k), finite(run));
      break;
    }
  }
  std::string why;
  if (!holds(s, claim, why))
    return fmt::format("a tile of {} values does not contribute the identity to {}: {}", fill,
                       contribution_name(into), why);
  return "";
}

std::string proved_window_masked(const WindowSkipRule& r, unsigned timeout_ms) {
  z3::context c;
  z3::solver s(c);
  s.set("timeout", timeout_ms);
  z3::expr o = c.int_const("offset"), P = c.int_const("P"), c0 = c.int_const("c0"),
           w = c.int_const("w"), p = c.int_const("p"), f = c.int_const("f");
  auto k = [&](std::int64_t v) { return c.int_val(static_cast<int64_t>(v)); };
  s.add(P >= 1 && c0 >= 0 && w >= 1 && p >= 0 && p < P && f >= c0 && f < c0 + w);
  s.add(o + k(std::max<std::int64_t>(0, r.channel_multiplier)) * (P - 1) + k(r.step) * c0 +
            k(std::max<std::int64_t>(0, r.step)) * (w - 1) <
        0);  // the guard fails
  z3::expr kept = o + k(r.channel_multiplier) * p + k(r.step) * f + k(r.cross) * p * f >= 0;
  std::string why;
  if (!holds(s, !kept, why)) return "a window the guard skips keeps an element: " + why;
  return "";
}

// An extended real or NaN: kind 2.
XReal ite(const z3::expr& cond, const XReal& a, const XReal& b) {
  return {z3::ite(cond, a.kind, b.kind), z3::ite(cond, a.val, b.val)};
}

std::string proved_window_use(const WindowSkipRule& r, unsigned timeout_ms) {
  z3::context c;
  z3::solver s(c);
  s.set("timeout", timeout_ms);
  XReal fill = constant(c, r.fill);
  if (r.use == WindowUse::Overwritten) {
    // select(pred, x, fill) where pred fails: the same for any two operands x1, x2.
    z3::expr pred = c.bool_const("pred");
    XReal x1{c.int_const("k1"), c.real_const("x1")}, x2{c.int_const("k2"), c.real_const("x2")};
    s.add(!pred && x1.kind >= -1 && x1.kind <= 2 && x2.kind >= -1 && x2.kind <= 2);
    std::string why;
    if (!holds(s, same(ite(pred, x1, fill), ite(pred, x2, fill)) && same(ite(pred, x1, fill), fill),
               why))
      return "the select's output reads its operand where the mask fails: " + why;
    return "";
  }
  z3::func_decl e = c.function("exp", c.real_sort(), c.real_sort());
  z3::func_decl round = c.function("round", c.real_sort(), c.real_sort());
  s.add(round(c.real_val(0)) == 0);
  XReal x = fill;
  auto nan = c.int_val(2);
  int n = 0;
  for (ChainOp op : r.chain) {
    z3::expr row = c.real_const(fmt::format("row{}", n++).c_str());  // a finite per-row operand
    switch (op) {
      case ChainOp::SubRow:
        x = {x.kind, x.val - row};
        break;
      case ChainOp::AddRow:
        x = {x.kind, x.val + row};
        break;
      case ChainOp::MulRow:  // inf * 0 is NaN
        x = {z3::ite(x.kind == 0 || x.kind == 2, x.kind,
                     z3::ite(row > 0, x.kind, z3::ite(row < 0, -x.kind, nan))),
             x.val * row};
        break;
      case ChainOp::DivRow:
        s.add(row != 0);
        x = {z3::ite(x.kind == 0 || x.kind == 2 || row > 0, x.kind, -x.kind), x.val / row};
        break;
      case ChainOp::Exp: {
        XReal y = exp(x, e, s);
        x = {z3::ite(x.kind == 2, nan, y.kind), y.val};
        break;
      }
      case ChainOp::Cast:
        x = {x.kind, round(x.val)};
        break;
    }
  }
  z3::expr acc = c.real_const("acc"), v = c.real_const("v");
  std::string why;
  if (!holds(s, x.kind == 0 && x.val == 0 && same(add_scaled(acc, x, v), finite(acc)), why))
    return fmt::format(
        "the chain does not turn a window of {} values into zeros (the identity of the matmul "
        "accumulation): {}",
        r.fill, why);
  return "";
}

}  // namespace

std::int64_t WindowSkipProof::slack(std::int64_t rows, std::int64_t width) const {
  return std::max<std::int64_t>(0, channel_multiplier) * (rows - 1) +
         std::max<std::int64_t>(0, step) * (width - 1);
}

const char* chain_op_name(ChainOp op) {
  switch (op) {
    case ChainOp::SubRow:
      return "sub";
    case ChainOp::AddRow:
      return "add";
    case ChainOp::MulRow:
      return "mul";
    case ChainOp::DivRow:
      return "div";
    case ChainOp::Exp:
      return "exp";
    case ChainOp::Cast:
      return "astype";
  }
  return "?";
}

WindowSkipProof prove_window_skip(const WindowSkipRule& rule, unsigned timeout_ms) {
  WindowSkipProof out;
  out.channel_multiplier = rule.channel_multiplier;
  out.step = rule.step;
  if (std::isnan(rule.fill)) {
    out.why = "the fill is NaN";
    return out;
  }
  if (rule.cross != 0) {
    out.why = "the mask is not affine in the tile's positions (a p * f term)";
    return out;
  }
  if (rule.step == 0) {
    out.why = "the mask does not depend on the column (no window is masked as a whole)";
    return out;
  }
  out.why = proved_window_masked(rule, timeout_ms);
  if (out.why.empty()) out.why = proved_window_use(rule, timeout_ms);
  out.proved = out.why.empty();
  return out;
}

WindowSkipProof prove_window_skip_once(const WindowSkipRule& rule) {
  if (std::isnan(rule.fill)) return prove_window_skip(rule);
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, double, int, std::vector<int>>;
  static std::mutex mutex;
  static std::map<Key, WindowSkipProof> proved;
  std::vector<int> chain;
  for (ChainOp op : rule.chain) chain.push_back(static_cast<int>(op));
  Key key{rule.channel_multiplier,    rule.step, rule.cross, rule.fill,
          static_cast<int>(rule.use), chain};
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = proved.find(key); it != proved.end()) return it->second;
  }
  WindowSkipProof p = prove_window_skip(rule);
  std::lock_guard<std::mutex> lock(mutex);
  return proved.emplace(key, std::move(p)).first->second;
}

std::int64_t TileSkipProof::corner(std::int64_t rows, std::int64_t cols) const {
  return std::max<std::int64_t>(0, mask.channel_multiplier) * (rows - 1) +
         std::max<std::int64_t>(0, mask.step) * (cols - 1);
}

const char* contribution_name(Contribution c) {
  switch (c) {
    case Contribution::Max:
      return "max";
    case Contribution::SumExp:
      return "sum of exp(x - max)";
    case Contribution::MatmulAccumulate:
      return "matmul accumulation";
    case Contribution::RescaledSumExp:
      return "rescaled sum of exp(x - max)";
    case Contribution::RescaledMatmulAccumulate:
      return "rescaled matmul accumulation";
  }
  return "?";
}

TileSkipProof prove_tile_skip(const TileSkipRule& rule, unsigned timeout_ms) {
  TileSkipProof out;
  out.mask = rule.mask;
  if (std::isnan(rule.fill)) {
    out.why = "the fill is NaN";
    return out;
  }
  if (rule.mask.cross != 0) {
    out.why = "the mask is not affine in the tile's positions (a p * f term)";
    return out;
  }
  if (rule.mask.row == 0 && rule.mask.col == 0) {
    out.why = "the mask does not depend on the tile origins (no tile is masked as a whole)";
    return out;
  }
  out.why = proved_masked(rule.mask, timeout_ms);
  if (out.why.empty()) out.why = proved_identity(rule.into, rule.fill, timeout_ms);
  out.proved = out.why.empty();
  return out;
}

TileSkipProof prove_tile_skip_once(const TileSkipRule& rule) {
  if (std::isnan(rule.fill)) return prove_tile_skip(rule);  // (NaN has no place in an ordered key)
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                         std::int64_t, double, int>;
  static std::mutex mutex;
  static std::map<Key, TileSkipProof> proved;
  const TileMask& m = rule.mask;
  Key key{m.row,  m.col,   m.constant, m.channel_multiplier,
          m.step, m.cross, rule.fill,  static_cast<int>(rule.into)};
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = proved.find(key); it != proved.end()) return it->second;
  }
  TileSkipProof p = prove_tile_skip(rule);
  std::lock_guard<std::mutex> lock(mutex);
  return proved.emplace(key, std::move(p)).first->second;
}

}  // namespace ts::verify

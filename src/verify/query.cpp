#include "query.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "witness.h"

namespace ts::verify {

namespace {

z3::expr precondition(Symbols& s, const sem::Precondition& p) {
  z3::expr l = s.dim_expr(p.lhs), r = s.dim_expr(p.rhs);
  switch (p.cmp) {
    case sem::BinOp::Eq:
      return l == r;
    case sem::BinOp::Ne:
      return l != r;
    case sem::BinOp::Lt:
      return l < r;
    case sem::BinOp::Le:
      return l <= r;
    case sem::BinOp::Gt:
      return l > r;
    case sem::BinOp::Ge:
      return l >= r;
    default:
      return s.ctx().bool_val(true);
  }
}

// The dims of a solver model; `small_only` keeps only values a witness search can run at.
sem::DimEnv model_dims(const z3::model& m, Symbols& s, bool small_only) {
  sem::DimEnv env;
  for (const auto& [name, e] : s.dims()) {
    z3::expr v = m.eval(e, true);
    std::int64_t x = 1;
    if (v.is_numeral_i64(x) && (!small_only || (x >= 1 && x <= 16))) env[name] = x;
  }
  return env;
}

std::string describe(const std::vector<sem::Precondition>& ps) {
  std::string s;
  for (const auto& p : ps) s += (s.empty() ? "" : " and ") + p.str();
  return s.empty() ? "nothing" : s;
}

std::vector<int> identity(std::size_t n) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int>(i);
  return v;
}

}  // namespace

Query::Query(const ir::Kernel& a, const ir::Kernel& b, std::vector<int> b_positions,
             const ProveOptions& o)
    : a_(a),
      b_(b),
      b_positions_(std::move(b_positions)),
      opts_(o),
      sym_(ctx_),
      nf_(ctx_),
      solver_(ctx_) {
  z3::params p(ctx_);
  p.set("rlimit", static_cast<unsigned>(std::min<std::uint64_t>(opts_.rlimit, 0xffffffffu)));
  p.set("timeout", opts_.timeout_ms);
  solver_.set(p);
  std::set<std::string> dims(a.dims.begin(), a.dims.end());
  dims.insert(b.dims.begin(), b.dims.end());
  for (const auto& d : dims) solver_.add(sym_.dim(d) >= 1);
}

z3::check_result Query::check(const z3::expr& claim, const std::string& what,
                              std::optional<Verdict>& out) {
  solver_.push();
  solver_.add(claim);
  std::uint64_t before = resources_used();
  z3::check_result r = solver_.check();
  max_check_ = std::max(max_check_, resources_used() - before);
  if (r == z3::unknown) {
    std::string why = solver_.reason_unknown();
    if (resources_used() - before >= opts_.rlimit || why.find("resource") != std::string::npos)
      out = unknown(
          fmt::format("resource limit exhausted (rlimit {}) deciding {}", opts_.rlimit, what));
    else if (why == "timeout" || why == "canceled")
      out = unknown(
          fmt::format("wall-clock safety timeout ({} ms) deciding {}", opts_.timeout_ms, what));
    else
      out = unknown(fmt::format("solver gave up deciding {}: {}", what, why));
  }
  return r;  // the caller pops (after reading a model)
}

// Z3's deterministic resource counter ("rlimit count"), cumulative over the context.
std::uint64_t Query::resources_used() {
  z3::stats st = solver_.statistics();
  for (unsigned i = 0; i < st.size(); ++i)
    if (st.key(i) == "rlimit count")
      return st.is_uint(i) ? st.uint_value(i) : static_cast<std::uint64_t>(st.double_value(i));
  return 0;
}

Verdict Query::run() {
  if (auto v = domain()) return *v;
  if (a_.outputs.size() != b_.outputs.size())
    return refuted(fmt::format("'{}' has {} outputs but '{}' has {}", a_.name, a_.outputs.size(),
                               b_.name, b_.outputs.size()),
                   std::nullopt);
  Encoder ea(a_, sym_, nf_, "a!", identity(a_.params.size())),
      eb(b_, sym_, nf_, "b!", b_positions_);
  for (std::size_t o = 0; o < a_.outputs.size(); ++o) {
    const auto& sa = a_.nodes[a_.outputs[o]].shape;
    const auto& sb = b_.nodes[b_.outputs[o]].shape;
    if (sa.size() != sb.size())
      return refuted(fmt::format("output {} has rank {} vs {}", o, sa.size(), sb.size()),
                     std::nullopt);
    if (auto v = shapes(o, sa, sb)) return *v;
    if (auto v = output(o, ea, eb)) return *v;
  }
  Verdict v;
  v.kind = VerdictKind::Equivalent;
  return v;
}

// Both kernels must accept the same dims, and some: a rewrite that is only well-shaped for some
// of them (a broadcast that needs N == N // 2, say) would otherwise be "equivalent" vacuously.
std::optional<Verdict> Query::domain() {
  z3::expr pa = ctx_.bool_val(true), pb = ctx_.bool_val(true);
  for (const auto& p : a_.preconditions) pa = pa && precondition(sym_, p);
  for (const auto& p : b_.preconditions) pb = pb && precondition(sym_, p);
  for (int side = 0; side < 2; ++side) {
    const ir::Kernel& narrower = side == 0 ? b_ : a_;
    std::optional<Verdict> out;
    if (check(side == 0 ? (pa && !pb) : (pb && !pa), "whether both kernels accept the same dims",
              out) == z3::sat) {
      Counterexample c;
      c.dims = model_dims(solver_.get_model(), sym_, false);
      c.note = fmt::format("'{}' is not defined (its shapes do not fit)", narrower.name);
      out = refuted(fmt::format("the kernels accept different dims: '{}' needs {}", narrower.name,
                                describe(narrower.preconditions)),
                    c);
    }
    solver_.pop();
    if (out) return out;
  }
  if (auto v = declared_shapes(a_)) return v;
  if (auto v = declared_shapes(b_)) return v;
  std::optional<Verdict> out;
  if (check(pa && pb, "whether any dims satisfy the kernels' preconditions", out) == z3::unsat)
    out = unknown(fmt::format(
        "no dims satisfy the kernels' preconditions ({}): both are defined nowhere, so nothing is "
        "compared (an empty domain proves nothing)",
        describe(a_.preconditions)));
  solver_.pop();
  if (out) return out;
  solver_.add(pa && pb);
  return std::nullopt;
}

// A declared return shape is a precondition only where the kernel's other preconditions imply it
// (the front end rejects the ones it sees narrowing the dims); checked here exactly, so a
// declared shape never restricts the dims a proof covers.
std::optional<Verdict> Query::declared_shapes(const ir::Kernel& k) {
  z3::expr others = ctx_.bool_val(true), declared = ctx_.bool_val(true);
  std::vector<sem::Precondition> listed;
  for (const auto& p : k.preconditions) {
    bool from_annotation =
        p.what.rfind("the declared return shape", 0) == 0;  // see ir/frontend.cpp
    (from_annotation ? declared : others) =
        (from_annotation ? declared : others) && precondition(sym_, p);
    if (from_annotation) listed.push_back(p);
  }
  if (listed.empty()) return std::nullopt;
  std::optional<Verdict> out;
  if (check(others && !declared, "whether the declared return shapes hold", out) == z3::sat) {
    sem::DimEnv at = model_dims(solver_.get_model(), sym_, false);
    std::string dims;
    for (const auto& [name, v] : at)
      dims += (dims.empty() ? "" : ", ") + name + " = " + std::to_string(v);
    out =
        unknown(fmt::format("the declared return shape of '{}' ({}) restricts its dims: it fails "
                            "at {}; nothing is proved "
                            "until the annotation says the inferred shape",
                            k.name, describe(listed), dims));
  }
  solver_.pop();
  return out;
}

std::optional<Verdict> Query::shapes(std::size_t o, const std::vector<sem::Dim>& sa,
                                     const std::vector<sem::Dim>& sb) {
  z3::expr differ = ctx_.bool_val(false);
  bool any = false;
  for (std::size_t d = 0; d < sa.size(); ++d) {
    if (sa[d] == sb[d]) continue;
    any = true;
    differ = differ || sym_.dim_expr(sa[d]) != sym_.dim_expr(sb[d]);
  }
  if (!any) return std::nullopt;
  std::optional<Verdict> out;
  std::string what = fmt::format("whether output {} shapes {} and {} are equal", o,
                                 sem::format_shape(sa), sem::format_shape(sb));
  if (check(differ, what, out) == z3::sat) {
    Counterexample c;
    c.dims = model_dims(solver_.get_model(), sym_, false);
    c.output = static_cast<int>(o);
    c.note = fmt::format("output {} has shape {} vs {}", o, sem::format_shape(sa),
                         sem::format_shape(sb));
    out = refuted(c.note, c);
  }
  solver_.pop();
  return out;
}

void Query::add_facts(const Encoder& e, std::size_t& done) {
  for (; done < e.facts().size(); ++done) solver_.add(e.facts()[done]);
}

// Output o: the same elements defined, and equal values wherever defined.
std::optional<Verdict> Query::output(std::size_t o, Encoder& ea, Encoder& eb) {
  const auto& shape = a_.nodes[a_.outputs[o]].shape;
  std::vector<z3::expr> idx;
  z3::expr in_range = ctx_.bool_val(true);
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d].is_const() && shape[d].value() == 1) {
      idx.push_back(ctx_.int_val(0));  // the only index of a size-1 axis
      continue;
    }
    z3::expr i = ctx_.int_const(fmt::format("{}{}", kIndexPrefix, d).c_str());
    idx.push_back(i);
    in_range = in_range && i >= 0 && i < sym_.dim_expr(shape[d]);
  }
  Element x = ea.element(a_.outputs[o], idx), y = eb.element(b_.outputs[o], idx);
  add_facts(ea, facts_a_);
  add_facts(eb, facts_b_);
  std::optional<Verdict> out;
  if (!x.defined.is_true() || !y.defined.is_true()) {
    std::string what = fmt::format("where output {} is defined", o);
    if (check(in_range && x.defined != y.defined, what, out) == z3::sat) {
      sem::DimEnv hint = model_dims(solver_.get_model(), sym_, true);
      out = refuted_or_unknown(
          fmt::format(
              "output {} is defined (no division by zero, log of a non-positive or sqrt of a "
              "negative number) at different elements",
              o),
          hint, true);
    }
    solver_.pop();
    if (out) return out;
  }
  z3::expr lhs = nf_.to_z3(x.value), rhs = nf_.to_z3(y.value);
  z3::expr diff = (lhs - rhs).simplify();
  if (diff.is_numeral() && diff.get_decimal_string(0) == "0") return std::nullopt;
  if (check(in_range && x.defined && lhs != rhs, fmt::format("output {}", o), out) == z3::sat) {
    sem::DimEnv hint = model_dims(solver_.get_model(), sym_, true);
    out = refuted_or_unknown(fmt::format("output {}", o), hint, false);
  }
  solver_.pop();
  return out;
}

Verdict Query::refuted(const std::string& why, std::optional<Counterexample> c) {
  Verdict v;
  v.kind = VerdictKind::NotEquivalent;
  v.reason = why;
  v.counterexample = std::move(c);
  return v;
}

Verdict Query::unknown(const std::string& why) {
  Verdict v;
  v.kind = VerdictKind::Unknown;
  v.reason = why;
  return v;
}

Verdict Query::refuted_or_unknown(const std::string& what, const sem::DimEnv& hint,
                                  bool definedness) {
  std::optional<sem::DimEnv> h;
  if (!hint.empty()) h = hint;
  if (auto c = find_witness(a_, b_, b_positions_, h))
    return refuted(definedness ? what : "the outputs differ", c);
  return unknown(
      fmt::format("the solver found a model of the abstract encoding of {} (uninterpreted "
                  "functions, abstracted reductions), but the "
                  "reference interpreter found no concrete counterexample beyond rounding at small "
                  "shapes: the theory is incomplete here",
                  what));
}

}  // namespace ts::verify

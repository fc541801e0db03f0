#include "tilesweep/verify/prove.h"

#include <chrono>
#include <set>

#include "encoder.h"
#include "normal_form.h"
#include "witness.h"

namespace ts::verify {

namespace {

using Clock = std::chrono::steady_clock;

void check_params(const ir::Kernel& a, const ir::Kernel& b) {
  auto sig = [](const ir::Param& p) {
    return p.name + ": " + (p.scalar ? std::string("scalar") : sem::format_shape(p.shape));
  };
  if (a.params.size() != b.params.size())
    throw UserError(fmt::format("error: '{}' takes {} parameters but '{}' takes {}; equivalence needs the same inputs",
                                a.name, a.params.size(), b.name, b.params.size()));
  for (std::size_t i = 0; i < a.params.size(); ++i) {
    const auto &p = a.params[i], &q = b.params[i];
    bool same = p.scalar == q.scalar && p.shape.size() == q.shape.size();
    for (std::size_t d = 0; same && d < p.shape.size(); ++d) same = p.shape[d] == q.shape[d];
    if (!same)
      throw UserError(fmt::format("error: parameter {} is {} in '{}' but {} in '{}'; equivalence needs the same inputs",
                                  i + 1, sig(p), a.name, sig(q), b.name));
  }
}

z3::expr precondition(Symbols& s, const sem::Precondition& p) {
  z3::expr l = s.dim_expr(p.lhs), r = s.dim_expr(p.rhs);
  switch (p.cmp) {
    case sem::BinOp::Eq: return l == r;
    case sem::BinOp::Ne: return l != r;
    case sem::BinOp::Lt: return l < r;
    case sem::BinOp::Le: return l <= r;
    case sem::BinOp::Gt: return l > r;
    case sem::BinOp::Ge: return l >= r;
    default: return s.ctx().bool_val(true);
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

class Query {
 public:
  Query(const ir::Kernel& a, const ir::Kernel& b, const ProveOptions& o)
      : a_(a), b_(b), opts_(o), sym_(ctx_), nf_(ctx_), solver_(ctx_) {
    z3::params p(ctx_);
    p.set("timeout", opts_.timeout_ms);
    solver_.set(p);
    std::set<std::string> dims(a.dims.begin(), a.dims.end());
    dims.insert(b.dims.begin(), b.dims.end());
    for (const auto& d : dims) solver_.add(sym_.dim(d) >= 1);
  }

  Verdict run() {
    if (auto v = same_domain()) return *v;
    if (a_.outputs.size() != b_.outputs.size())
      return refuted(fmt::format("'{}' has {} outputs but '{}' has {}", a_.name, a_.outputs.size(), b_.name,
                                 b_.outputs.size()), std::nullopt);
    Encoder ea(a_, sym_, nf_, "a!"), eb(b_, sym_, nf_, "b!");
    for (std::size_t o = 0; o < a_.outputs.size(); ++o) {
      const auto& sa = a_.nodes[a_.outputs[o]].shape;
      const auto& sb = b_.nodes[b_.outputs[o]].shape;
      if (sa.size() != sb.size())
        return refuted(fmt::format("output {} has rank {} vs {}", o, sa.size(), sb.size()), std::nullopt);
      if (auto v = shapes(o, sa, sb)) return *v;
      std::vector<z3::expr> idx;
      z3::expr in_range = ctx_.bool_val(true);
      for (std::size_t d = 0; d < sa.size(); ++d) {
        if (sa[d].is_const() && sa[d].value() == 1) {
          idx.push_back(ctx_.int_val(0));  // the only index of a size-1 axis
          continue;
        }
        z3::expr i = ctx_.int_const(fmt::format("i{}", d).c_str());
        idx.push_back(i);
        in_range = in_range && i >= 0 && i < sym_.dim_expr(sa[d]);
      }
      z3::expr lhs = nf_.to_z3(ea.node(a_.outputs[o], idx));
      z3::expr rhs = nf_.to_z3(eb.node(b_.outputs[o], idx));
      z3::expr diff = (lhs - rhs).simplify();
      if (diff.is_numeral() && diff.get_decimal_string(0) == "0") continue;
      solver_.push();
      solver_.add(in_range);
      solver_.add(lhs != rhs);
      z3::check_result r = solver_.check();
      if (r == z3::unsat) {
        solver_.pop();
        continue;
      }
      if (r == z3::unknown) {
        std::string why = solver_.reason_unknown();
        solver_.pop();
        return unknown(why == "timeout" || why == "canceled"
                           ? fmt::format("solver timeout after {} ms on output {}", opts_.timeout_ms, o)
                           : fmt::format("solver gave up on output {}: {}", o, why));
      }
      sem::DimEnv hint = model_dims(solver_.get_model(), sym_, true);
      solver_.pop();
      return refuted_or_unknown(o, hint);
    }
    Verdict v;
    v.kind = VerdictKind::Equivalent;
    return v;
  }

 private:
  // Both kernels must accept the same dims: a rewrite that is only well-shaped for some of
  // them (a broadcast that needs N == N // 2, say) would otherwise be "equivalent" vacuously.
  std::optional<Verdict> same_domain() {
    z3::expr pa = ctx_.bool_val(true), pb = ctx_.bool_val(true);
    for (const auto& p : a_.preconditions) pa = pa && precondition(sym_, p);
    for (const auto& p : b_.preconditions) pb = pb && precondition(sym_, p);
    for (int side = 0; side < 2; ++side) {
      const ir::Kernel& narrower = side == 0 ? b_ : a_;
      solver_.push();
      solver_.add(side == 0 ? (pa && !pb) : (pb && !pa));
      z3::check_result r = solver_.check();
      std::optional<Verdict> out;
      if (r == z3::sat) {
        Counterexample c;
        c.dims = model_dims(solver_.get_model(), sym_, false);
        c.note = fmt::format("'{}' is not defined (its shapes do not fit)", narrower.name);
        out = refuted(fmt::format("the kernels accept different dims: '{}' needs {}", narrower.name,
                                  describe(narrower.preconditions)), c);
      } else if (r == z3::unknown) {
        out = unknown("cannot decide whether both kernels accept the same dims: " + solver_.reason_unknown());
      }
      solver_.pop();
      if (out) return out;
    }
    solver_.add(pa && pb);
    return std::nullopt;
  }

  static std::string describe(const std::vector<sem::Precondition>& ps) {
    std::string s;
    for (const auto& p : ps) s += (s.empty() ? "" : " and ") + p.str();
    return s.empty() ? "nothing" : s;
  }

  std::optional<Verdict> shapes(std::size_t o, const std::vector<sem::Dim>& sa, const std::vector<sem::Dim>& sb) {
    z3::expr differ = ctx_.bool_val(false);
    bool any = false;
    for (std::size_t d = 0; d < sa.size(); ++d) {
      if (sa[d] == sb[d]) continue;
      any = true;
      differ = differ || sym_.dim_expr(sa[d]) != sym_.dim_expr(sb[d]);
    }
    if (!any) return std::nullopt;
    solver_.push();
    solver_.add(differ);
    z3::check_result r = solver_.check();
    std::optional<Verdict> out;
    if (r == z3::sat) {
      Counterexample c;
      c.dims = model_dims(solver_.get_model(), sym_, false);
      c.output = static_cast<int>(o);
      c.note = fmt::format("output {} has shape {} vs {}", o, sem::format_shape(sa), sem::format_shape(sb));
      out = refuted(c.note, c);
    } else if (r == z3::unknown) {
      out = unknown(fmt::format("cannot decide whether output {} shapes {} and {} are equal: {}", o,
                                sem::format_shape(sa), sem::format_shape(sb), solver_.reason_unknown()));
    }
    solver_.pop();
    return out;
  }

  Verdict refuted(const std::string& why, std::optional<Counterexample> c) {
    Verdict v;
    v.kind = VerdictKind::NotEquivalent;
    v.reason = why;
    v.counterexample = std::move(c);
    return v;
  }

  Verdict unknown(const std::string& why) {
    Verdict v;
    v.kind = VerdictKind::Unknown;
    v.reason = why;
    return v;
  }

  Verdict refuted_or_unknown(std::size_t o, const sem::DimEnv& hint) {
    std::optional<sem::DimEnv> h;
    if (!hint.empty()) h = hint;
    if (auto c = find_witness(a_, b_, h)) return refuted("the outputs differ", c);
    return unknown(fmt::format(
        "the solver found a model of the abstract encoding of output {} (uninterpreted functions, "
        "abstracted reductions), but the reference interpreter found no concrete counterexample at small shapes: the theory is incomplete here", o));
  }

  const ir::Kernel& a_;
  const ir::Kernel& b_;
  ProveOptions opts_;
  z3::context ctx_;  // one per query, so per thread
  Symbols sym_;
  NormalForm nf_;
  z3::solver solver_;
};

}  // namespace

Verdict prove_equivalent(const ir::Kernel& a, const ir::Kernel& b, const ProveOptions& options, VerdictCache* cache) {
  check_params(a, b);
  std::string key;
  if (cache) {
    key = VerdictCache::key(a, b);
    if (auto v = cache->find(key)) {
      v->cached = true;
      v->ms = 0;
      return *v;
    }
  }
  auto start = Clock::now();
  Verdict v;
  try {
    v = Query(a, b, options).run();
  } catch (const z3::exception& e) {
    v.kind = VerdictKind::Unknown;
    v.reason = std::string("solver error: ") + e.msg();
  }
  v.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (cache) cache->insert(key, v);
  return v;
}

}  // namespace ts::verify

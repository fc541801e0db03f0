#include "tilesweep/semantics/instantiate.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "tilesweep/semantics/dim_relation.h"

namespace ts::sem {

std::optional<bool> Precondition::holds(const DimEnv& env) const {
  auto a = lhs.evaluate(env), b = rhs.evaluate(env);
  if (!a || !b) return std::nullopt;
  switch (cmp) {
    case BinOp::Eq:
      return *a == *b;
    case BinOp::Ne:
      return *a != *b;
    case BinOp::Lt:
      return *a < *b;
    case BinOp::Le:
      return *a <= *b;
    case BinOp::Gt:
      return *a > *b;
    case BinOp::Ge:
      return *a >= *b;
    default:
      return std::nullopt;
  }
}

std::string Precondition::values(const DimEnv& env) const {
  auto text = [&](const Dim& d) {
    auto v = d.evaluate(env);
    std::string value = v ? std::to_string(*v) : "unbound";
    return d.is_const() ? d.str() : d.str() + " = " + value;
  };
  if (rhs.is_const()) return text(lhs);
  return text(lhs) + " and " + text(rhs);
}

namespace {

// Index variables visible while building an element expression.
struct Scope {
  std::map<std::string, int> scalars;              // index name -> variable
  std::map<std::string, std::vector<int>> groups;  // group -> variable per element
  std::string elem_group;                          // inside `*G{...}`: G and the element
  int elem = -1;
};

class Instantiator {
 public:
  Instantiator(const OpSpec& op, const std::vector<std::vector<Dim>>& shapes, const SourceLoc& loc,
               const OpTable& table)
      : op_(op), shapes_(shapes), loc_(loc), table_(table), operand_groups_(shapes.size()) {}

  OpInstance run(const AttrMap& given) {
    if (shapes_.size() != op_.operands.size())
      fail(loc_, "'{}' takes {} tensor operand(s), got {}", op_.name, op_.operands.size(),
           shapes_.size());
    normalize_attrs(given);
    for (std::size_t i = 0; i < shapes_.size(); ++i) match_operand(static_cast<int>(i));
    build_output();
    for (const Item& r : op_.requirements) check_requirement(r);
    inst_.body.root = build(*op_.expr, scope_);
    inst_.attrs = attrs_;
    return std::move(inst_);
  }

 private:
  // ---- attributes ----
  void normalize_attrs(const AttrMap& given) {
    for (const auto& [k, v] : given)
      if (!op_.attr(k)) fail(loc_, "'{}' has no argument '{}'", op_.name, k);
    for (const AttrSpec& a : op_.attrs) {
      auto it = given.find(a.name);
      if (it == given.end()) {
        if (a.default_reversed) {
          std::vector<Dim> rev;
          int r = rank_of(a.of);
          for (int i = r - 1; i >= 0; --i) rev.push_back(Dim(i));
          attrs_[a.name] = rev;
          continue;
        }
        if (!a.default_value) fail(loc_, "'{}' needs the argument '{}'", op_.name, a.name);
        attrs_[a.name] = coerce(a, *a.default_value);
        continue;
      }
      attrs_[a.name] = coerce(a, it->second);
    }
  }

  int rank_of(const std::string& operand) const {
    return static_cast<int>(shapes_[op_.operand_index(operand)].size());
  }

  [[noreturn]] void bad_attr(const AttrSpec& a, const AttrValue& v, const char* expected) {
    fail(loc_, "argument '{}' of '{}' must be {}, got {}", a.name, op_.name, expected,
         to_string(v));
  }

  std::int64_t axis_value(const AttrSpec& a, const AttrValue& v, int rank) {
    std::int64_t x;
    if (auto* i = std::get_if<std::int64_t>(&v))
      x = *i;
    else if (auto* d = std::get_if<Dim>(&v); d && d->is_const())
      x = d->value();
    else
      bad_attr(a, v, "an integer axis");
    if (x < -rank || x >= rank)
      fail(loc_, "axis {} is out of range for '{}' of rank {} in '{}' (valid: {} to {})", x, a.of,
           rank, op_.name, -rank, rank - 1);
    return x < 0 ? x + rank : x;
  }

  AttrValue coerce(const AttrSpec& a, const AttrValue& v) {
    switch (a.type) {
      case AttrType::Bool:
        if (auto* b = std::get_if<bool>(&v)) return *b;
        bad_attr(a, v, "True or False");
      case AttrType::Int:
        if (auto* i = std::get_if<std::int64_t>(&v)) return *i;
        if (auto* d = std::get_if<Dim>(&v); d && d->is_const()) return d->value();
        bad_attr(a, v, "an integer");
      case AttrType::Float:
        if (auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
        if (auto* f = std::get_if<double>(&v)) return *f;
        bad_attr(a, v, "a number");
      case AttrType::Dim:
        if (auto* i = std::get_if<std::int64_t>(&v)) return Dim(*i);
        if (auto* d = std::get_if<Dim>(&v)) return *d;
        bad_attr(a, v, "an integer or a dim expression");
      case AttrType::Dims:
        if (auto* ds = std::get_if<std::vector<Dim>>(&v)) return *ds;
        if (auto* i = std::get_if<std::int64_t>(&v)) return std::vector<Dim>{Dim(*i)};
        if (auto* d = std::get_if<Dim>(&v)) return std::vector<Dim>{*d};
        bad_attr(a, v, "a tuple of dims");
      case AttrType::Axis:
        return axis_value(a, v, rank_of(a.of));
      case AttrType::Name: {
        auto* s = std::get_if<std::string>(&v);
        std::string list;
        for (const auto& c : a.choices) list += (list.empty() ? "" : ", ") + c;
        if (!s) bad_attr(a, v, ("one of " + list).c_str());
        if (std::find(a.choices.begin(), a.choices.end(), *s) == a.choices.end())
          fail(loc_, "argument '{}' of '{}' must be one of {}, got '{}'", a.name, op_.name, list,
               *s);
        return *s;
      }
      case AttrType::Axes: {
        auto* ds = std::get_if<std::vector<Dim>>(&v);
        if (!ds) bad_attr(a, v, "a tuple of axes");
        int rank = rank_of(a.of);
        if (static_cast<int>(ds->size()) != rank)
          fail(loc_, "'{}' needs {} axes for '{}' of rank {}, got {}", op_.name, rank, a.of, rank,
               to_string(v));
        std::vector<Dim> out;
        std::vector<bool> seen(rank, false);
        for (const Dim& d : *ds) {
          std::int64_t x = axis_value(a, d, rank);
          if (seen[x]) fail(loc_, "axes {} of '{}' repeat axis {}", to_string(v), op_.name, x);
          seen[x] = true;
          out.push_back(Dim(x));
        }
        return out;
      }
    }
    bad_attr(a, v, "a valid value");
  }

  // ---- matching operand patterns ----
  void match_operand(int k) {
    const Pattern& p = op_.shapes[k];
    const std::vector<Dim>& shape = shapes_[k];
    int pi = -1;
    for (std::size_t i = 0; i < p.items.size(); ++i)
      if (!p.items[i].position.empty()) pi = static_cast<int>(i);
    if (pi < 0) {
      match_seq(k, 0, static_cast<int>(p.items.size()), 0, static_cast<int>(shape.size()));
      return;
    }
    auto pos = static_cast<int>(std::get<std::int64_t>(attrs_.at(p.items[pi].position)));
    match_seq(k, 0, pi, 0, pos);
    bind_dim(p.items[pi].name, shape[pos], k);
    match_seq(k, pi + 1, static_cast<int>(p.items.size()), pos + 1, static_cast<int>(shape.size()));
  }

  [[noreturn]] void rank_mismatch(int k) {
    std::string pat = "[";
    for (std::size_t i = 0; i < op_.shapes[k].items.size(); ++i)
      pat += (i ? ", " : "") + to_string(op_.shapes[k].items[i]);
    fail(loc_, "'{}' cannot take '{}' of shape {}: expected a shape like {}]", op_.name,
         op_.operands[k], format_shape(shapes_[k]), pat);
  }

  void match_seq(int k, int ib, int ie, int db, int de) {
    const auto& items = op_.shapes[k].items;
    int groups = 0, fixed = 0;
    for (int i = ib; i < ie; ++i) (items[i].group ? groups : fixed)++;
    int len = de - db;
    TS_CHECK(groups <= 1, "op '{}': more than one group on one side of the positioned dim",
             op_.name);
    if (len < fixed || (groups == 0 && len != fixed)) rank_mismatch(k);
    int d = db;
    for (int i = ib; i < ie; ++i) {
      const Item& it = items[i];
      if (it.group) {
        int n = len - fixed;
        bind_group(it.name, {shapes_[k].begin() + d, shapes_[k].begin() + d + n}, k);
        d += n;
      } else if (!it.name.empty()) {
        bind_dim(it.name, shapes_[k][d++], k);
      } else {
        Dim want = eval_size(*it.expr, -1);
        if (!(want == shapes_[k][d]))
          fail(loc_, "'{}' needs dim {} of '{}' to be {}, got {} (shape {})", op_.name, d,
               op_.operands[k], want.str(), shapes_[k][d].str(), format_shape(shapes_[k]));
        ++d;
      }
    }
  }

  // Equal dims, or a precondition when equality holds for some dims only (divisibility, or a
  // relation such as N == 2 * F); an error (false) when no dims satisfy it or it only renames a
  // dim (K == N: the kernel should give them one name).
  bool unify(const Dim& a, const Dim& b, const std::string& what) {
    if (a == b) return true;
    if ((a.has_floordiv() || b.has_floordiv()) && !(a - b).is_const()) {
      inst_.preconditions.push_back({a, BinOp::Eq, b, what, loc_});
      return true;
    }
    DimRelation r = relate(a, b);
    if (r.kind != DimRelation::Relation) return false;
    inst_.preconditions.push_back({r.lhs, BinOp::Eq, r.rhs, what, loc_});
    return true;
  }

  void bind_dim(const std::string& name, const Dim& d, int k) {
    auto [it, inserted] = dims_.try_emplace(name, d);
    if (inserted) {
      dim_owner_[name] = k;
      return;
    }
    int o = dim_owner_[name];
    if (!unify(it->second, d,
               fmt::format("dim {} of the operands of '{}' must match", name, op_.name)))
      fail(loc_, "'{}' needs matching dims: {} of '{}' {} is {}, but of '{}' {} is {}", op_.name,
           name, op_.operands[o], format_shape(shapes_[o]), it->second.str(), op_.operands[k],
           format_shape(shapes_[k]), d.str());
  }

  bool broadcasts(const std::string& g) const {
    return std::find(op_.broadcast.begin(), op_.broadcast.end(), g) != op_.broadcast.end();
  }

  void bind_group(const std::string& g, std::vector<Dim> ds, int k) {
    operand_groups_[k][g] = ds;
    auto [it, inserted] = groups_.try_emplace(g, ds);
    if (inserted) {
      group_owner_[g] = k;
      return;
    }
    int o = group_owner_[g];
    auto mismatch = [&] {
      fail(loc_, "'{}' operands do not {}: '{}' has shape {} and '{}' has shape {}", op_.name,
           broadcasts(g) ? "broadcast together" : "match", op_.operands[o],
           format_shape(shapes_[o]), op_.operands[k], format_shape(shapes_[k]));
    };
    std::vector<Dim>& cur = it->second;
    if (!broadcasts(g)) {
      if (cur.size() != ds.size()) mismatch();
      for (std::size_t i = 0; i < ds.size(); ++i)
        if (!unify(cur[i], ds[i], fmt::format("dims of the operands of '{}' must match", op_.name)))
          mismatch();
      return;
    }
    std::size_t n = std::max(cur.size(), ds.size());
    std::vector<Dim> merged(n);
    for (std::size_t i = 0; i < n; ++i) {
      bool has_a = i + cur.size() >= n, has_b = i + ds.size() >= n;
      Dim a = has_a ? cur[i + cur.size() - n] : Dim(1);
      Dim b = has_b ? ds[i + ds.size() - n] : Dim(1);
      if (a == b || (b.is_const() && b.value() == 1))
        merged[i] = a;
      else if (a.is_const() && a.value() == 1)
        merged[i] = b;
      else if (unify(a, b, fmt::format("operands of '{}' must broadcast", op_.name)))
        merged[i] = a;
      else
        mismatch();
    }
    cur = merged;
  }

  // ---- output ----
  bool flag_on(const Item& it) const {
    return it.flag.empty() || std::get<bool>(attrs_.at(it.flag));
  }

  void build_output() {
    for (const Item& it : op_.out.items) {
      if (!flag_on(it)) continue;
      if (it.group) {
        if (!it.from_attr.empty()) bind_group_from_attr(it);
        auto g = groups_.find(it.name);
        TS_CHECK(g != groups_.end(), "op '{}': output group {} is not bound", op_.name, it.name);
        const std::vector<Dim>& ds = g->second;
        std::vector<int> vars(ds.size());
        std::vector<Dim> perm;
        if (!it.permute.empty()) perm = std::get<std::vector<Dim>>(attrs_.at(it.permute));
        for (std::size_t j = 0; j < ds.size(); ++j) {
          int e = perm.empty() ? static_cast<int>(j) : static_cast<int>(perm[j].value());
          Dim size = it.each ? eval_size(*it.each, e, it.name) : ds[e];
          vars[e] = add_out(size, fmt::format("{}{}", it.name, e));
        }
        scope_.groups[it.name] = vars;
      } else if (it.expr && !(it.expr->kind == Expr::Name && it.expr->name == it.name)) {
        int v = add_out(eval_size(*it.expr, -1), it.name.empty() ? "_" : it.name);
        if (!it.name.empty()) scope_.scalars[it.name] = v;
      } else {
        auto d = dims_.find(it.name);
        if (d == dims_.end()) {
          // A size expression in the output that is a bare attribute name.
          int v = add_out(eval_size(*it.expr, -1), "_");
          (void)v;
          continue;
        }
        scope_.scalars[it.name] = add_out(d->second, it.name);
      }
    }
    inst_.body.rank = static_cast<int>(inst_.shape.size());
  }

  int add_out(const Dim& size, std::string name) {
    if (size.is_const() && size.value() < 0)
      fail(loc_, "'{}' would produce a negative dim {}", op_.name, size.str());
    inst_.shape.push_back(size);
    inst_.body.var_names.push_back(std::move(name));
    return static_cast<int>(inst_.shape.size()) - 1;
  }

  void bind_group_from_attr(const Item& it) {
    std::vector<Dim> target = std::get<std::vector<Dim>>(attrs_.at(it.from_attr));
    auto g = groups_.find(it.name);
    if (g == groups_.end()) {
      groups_[it.name] = target;
      return;
    }
    // Operands' groups broadcast to the attribute's shape (one direction only).
    const std::vector<Dim>& cur = g->second;
    bool ok = cur.size() <= target.size();
    for (std::size_t i = 0; ok && i < cur.size(); ++i) {
      const Dim& a = cur[cur.size() - 1 - i];
      const Dim& b = target[target.size() - 1 - i];
      ok = (a.is_const() && a.value() == 1) ||
           unify(a, b, fmt::format("operands of '{}' must broadcast", op_.name));
    }
    if (!ok)
      fail(loc_, "'{}' cannot broadcast shape {} to {}", op_.name, format_shape(cur),
           format_shape(target));
    g->second = target;
  }

  // ---- sizes ----
  Dim eval_size(const Expr& e, int elem, const std::string& elem_group = "") {
    switch (e.kind) {
      case Expr::Number:
        if (e.number != std::floor(e.number)) spec_error(e, "a size must be an integer");
        return Dim(static_cast<std::int64_t>(e.number));
      case Expr::Name: {
        if (!elem_group.empty() && e.name == elem_group) return groups_.at(elem_group)[elem];
        if (auto d = dims_.find(e.name); d != dims_.end()) return d->second;
        if (auto a = attrs_.find(e.name); a != attrs_.end()) {
          if (auto* i = std::get_if<std::int64_t>(&a->second)) return Dim(*i);
          if (auto* d = std::get_if<Dim>(&a->second)) return *d;
          if (auto* ds = std::get_if<std::vector<Dim>>(&a->second); ds && elem >= 0) {
            if (elem >= static_cast<int>(ds->size()))
              fail(loc_, "'{}' needs one '{}' entry per dim, got {}", op_.name, e.name,
                   to_string(a->second));
            return (*ds)[elem];
          }
        }
        spec_error(e, "'" + e.name + "' is not a dim or integer attribute");
      }
      case Expr::Neg:
        return -eval_size(*e.args[0], elem, elem_group);
      case Expr::Binary: {
        Dim a = eval_size(*e.args[0], elem, elem_group),
            b = eval_size(*e.args[1], elem, elem_group);
        switch (e.op) {
          case BinOp::Add:
            return a + b;
          case BinOp::Sub:
            return a - b;
          case BinOp::Mul:
            return a * b;
          case BinOp::FloorDiv:
          case BinOp::Mod:
            if (b.is_const() && b.value() <= 0)
              fail(loc_, "'{}' divides a size by {}", op_.name, b.str());
            return e.op == BinOp::FloorDiv ? floordiv(a, b) : a - floordiv(a, b) * b;
          default:
            spec_error(e, "operator not allowed in a size");
        }
      }
      case Expr::Call:
        if (e.name == "numel" && e.args.size() == 1 && e.args[0]->kind == Expr::Name) {
          auto g = groups_.find(e.args[0]->name);
          if (g == groups_.end()) spec_error(e, "numel() needs a group");
          Dim p(1);
          for (const Dim& d : g->second) p = p * d;
          return p;
        }
        spec_error(e, "only numel(G) may be called in a size");
      default:
        spec_error(e, "not a size expression");
    }
  }

  [[noreturn]] void spec_error(const Expr& e, const std::string& what) {
    fail(op_.loc, "op '{}': {} (in '{}')", op_.name, what, to_string(e));
  }

  void check_requirement(const Item& r) {
    int n = r.group ? static_cast<int>(groups_.at(r.name).size()) : 1;
    for (int j = 0; j < n; ++j) {
      const Expr& c = r.group ? *r.each : *r.expr;
      if (c.kind != Expr::Binary) spec_error(c, "a requirement must be a comparison");
      Dim a = eval_size(*c.args[0], r.group ? j : -1, r.group ? r.name : "");
      Dim b = eval_size(*c.args[1], r.group ? j : -1, r.group ? r.name : "");
      Precondition p{a, c.op, b, fmt::format("'{}' requires {}", op_.name, to_string(c)), loc_};
      Dim diff = a - b;
      if ((c.op == BinOp::Le && (b - a).provably_nonneg()) ||
          (c.op == BinOp::Ge && diff.provably_nonneg()) ||
          (c.op == BinOp::Lt && (b - a - Dim(1)).provably_nonneg()) ||
          (c.op == BinOp::Gt && (diff - Dim(1)).provably_nonneg()))
        continue;
      // Without floor divisions, an equality relates dims (or fails for all of them).
      bool independent = c.op == BinOp::Eq && !a.has_floordiv() && !b.has_floordiv();
      if (independent && !diff.is_const()) {
        related(r, a, b, p);
        continue;
      }
      if (diff.is_const()) {
        // With a constant difference the comparison is decided: compare it with 0.
        Precondition on_diff{diff, c.op, Dim(0), p.what};
        if (!*on_diff.holds({}))
          fail(loc_, "'{}' requires {}: {} {} {} does not hold", op_.name, to_string(r), a.str(),
               to_string(c.op), b.str());
        continue;
      }
      inst_.preconditions.push_back(p);
    }
  }

  // An equality of sizes without floor divisions: a precondition when it relates dims (C ==
  // D * H), an error when no dims satisfy it or it only renames a dim.
  void related(const Item& r, const Dim& a, const Dim& b, Precondition p) {
    DimRelation rel = relate(a, b);
    if (rel.kind == DimRelation::Relation) {
      p.lhs = rel.lhs;
      p.rhs = rel.rhs;
      inst_.preconditions.push_back(std::move(p));
      return;
    }
    std::string hint;
    if (rel.kind == DimRelation::Renaming)
      hint = fmt::format(" (it would need {} == {}: {})", rel.lhs.str(), rel.rhs.str(),
                         rel.rhs.is_const() ? "write " + rel.rhs.str() + " for " + rel.lhs.str()
                                            : std::string("give both dims one name"));
    fail(loc_, "'{}' requires {}: {} == {} does not hold{}", op_.name, to_string(r), a.str(),
         b.str(), hint);
  }

  // ---- element expression ----
  int node(TermOp op, std::vector<int> args, bool integer) {
    TermNode n;
    n.op = op;
    n.args = std::move(args);
    n.integer = integer;
    return inst_.body.add(std::move(n));
  }
  int constant(double v) {
    TermNode n;
    n.op = TermOp::Const;
    n.value = v;
    n.integer = v == std::floor(v);
    return inst_.body.add(std::move(n));
  }
  int size_term(const Dim& d) {
    if (d.is_const()) return constant(static_cast<double>(d.value()));
    TermNode n;
    n.op = TermOp::Size;
    n.size = d;
    n.integer = true;
    return inst_.body.add(std::move(n));
  }
  int index(int var) {
    TermNode n;
    n.op = TermOp::Index;
    n.var = var;
    n.integer = true;
    return inst_.body.add(std::move(n));
  }
  bool is_int(int t) const { return inst_.body.nodes[t].integer; }

  int new_var(const std::string& name) {
    inst_.body.var_names.push_back(name);
    return static_cast<int>(inst_.body.var_names.size()) - 1;
  }

  int build(const Expr& e, Scope& s) {
    switch (e.kind) {
      case Expr::Number:
        return constant(e.number);
      case Expr::Name:
        return build_name(e, s);
      case Expr::Neg: {
        int a = build(*e.args[0], s);
        return node(TermOp::Neg, {a}, is_int(a));
      }
      case Expr::Binary: {
        int a = build(*e.args[0], s), b = build(*e.args[1], s);
        static const TermOp ops[] = {TermOp::Add,      TermOp::Sub, TermOp::Mul, TermOp::Div,
                                     TermOp::FloorDiv, TermOp::Mod, TermOp::Lt,  TermOp::Le,
                                     TermOp::Gt,       TermOp::Ge,  TermOp::Eq,  TermOp::Ne};
        TermOp op = ops[static_cast<int>(e.op)];
        bool integer = op == TermOp::Div ? false : (op >= TermOp::Lt || (is_int(a) && is_int(b)));
        return node(op, {a, b}, integer);
      }
      case Expr::Call:
        return build_call(e, s);
      case Expr::Reduce:
        return build_reduce(e, s);
      case Expr::Access:
        return build_access(e, s);
    }
    spec_error(e, "unknown expression");
  }

  int build_name(const Expr& e, Scope& s) {
    if (auto it = inline_args_.find(e.name); it != inline_args_.end()) return it->second;
    if (!s.elem_group.empty() && e.name == s.elem_group) return index(s.groups.at(e.name)[s.elem]);
    if (auto it = s.scalars.find(e.name); it != s.scalars.end()) return index(it->second);
    if (auto a = attrs_.find(e.name); a != attrs_.end()) {
      const AttrValue& v = a->second;
      if (auto* f = std::get_if<double>(&v)) return constant(*f);
      if (auto* i = std::get_if<std::int64_t>(&v)) return constant(static_cast<double>(*i));
      if (auto* b = std::get_if<bool>(&v)) return constant(*b ? 1 : 0);
      if (auto* d = std::get_if<Dim>(&v)) return size_term(*d);
      if (auto* ds = std::get_if<std::vector<Dim>>(&v); ds && s.elem >= 0)
        return size_term((*ds)[s.elem]);
    }
    if (int k = op_.operand_index(e.name); k >= 0) {
      Expr access;
      access.kind = Expr::Access;
      access.name = e.name;
      access.bare = true;
      access.col = e.col;
      return build_access(access, s);
    }
    if (dims_.count(e.name))
      spec_error(e, "'" + e.name + "' is a dim, not an index here; write size(" + e.name +
                        ") for its size");
    spec_error(e, "unknown name '" + e.name + "'");
  }

  // The name an attribute of type Name holds, for apply() and reduce().
  const std::string& name_attr(const Expr& e, const Expr& arg) {
    if (arg.kind != Expr::Name) spec_error(e, "the first argument must name an attribute");
    auto a = attrs_.find(arg.name);
    if (a == attrs_.end() || !std::holds_alternative<std::string>(a->second))
      spec_error(e, "'" + arg.name + "' is not a name attribute");
    return std::get<std::string>(a->second);
  }

  // apply(attr, args...): the element-wise op the attribute names, inlined on the arguments.
  int build_apply(const Expr& e, Scope& s) {
    if (e.args.empty()) spec_error(e, "apply takes (attribute, arguments...)");
    const std::string& name = name_attr(e, *e.args[0]);
    const OpSpec* f = table_.find(name);
    if (!f) fail(loc_, "'{}' applies '{}', which is not an op", op_.name, name);
    if (f->operands.size() + 1 != e.args.size() || !f->attrs.empty())
      fail(loc_, "'{}' applies '{}', which does not take {} operand(s) and no attributes", op_.name,
           name, e.args.size() - 1);
    for (const auto& p : f->shapes)
      if (p.items.size() != 1 || !p.items[0].group)
        fail(loc_, "'{}' applies '{}', which is not element-wise", op_.name, name);
    std::map<std::string, int> args;
    for (std::size_t i = 0; i < f->operands.size(); ++i)
      args[f->operands[i]] = build(*e.args[i + 1], s);
    std::swap(args, inline_args_);
    int t = build(*f->expr, s);
    std::swap(args, inline_args_);
    return t;
  }

  int build_call(const Expr& e, Scope& s) {
    if (e.name == "apply") return build_apply(e, s);
    if (e.name == "reduce") {
      // reduce(attr, dim, body): a reduction whose kind an attribute names.
      if (e.args.size() != 3 || e.args[1]->kind != Expr::Name)
        spec_error(e, "reduce takes (attribute, dim, body)");
      static const std::map<std::string, Reducer> kinds = {{"add", Reducer::Sum},
                                                           {"mul", Reducer::Prod},
                                                           {"max", Reducer::Max},
                                                           {"min", Reducer::Min}};
      const std::string& kind = name_attr(e, *e.args[0]);
      auto k = kinds.find(kind);
      if (k == kinds.end())
        fail(loc_, "'{}' reduces with '{}' (expected add, mul, max or min)", op_.name, kind);
      Expr r;
      r.kind = Expr::Reduce;
      r.reducer = k->second;
      r.name = e.args[1]->name;
      r.args = {e.args[2]};
      r.col = e.col;
      return build_reduce(r, s);
    }
    if (e.name == "select") {
      if (e.args.size() != 3) spec_error(e, "select takes (condition, then, else)");
      int c = build(*e.args[0], s), a = build(*e.args[1], s), b = build(*e.args[2], s);
      return node(TermOp::Select, {c, a, b}, is_int(a) && is_int(b));
    }
    if (e.name == "size") {
      if (e.args.size() != 1 || e.args[0]->kind != Expr::Name)
        spec_error(e, "size takes a dim name");
      const std::string& n = e.args[0]->name;
      if (!s.elem_group.empty() && n == s.elem_group) return size_term(groups_.at(n)[s.elem]);
      auto d = dims_.find(n);
      if (d == dims_.end()) spec_error(e, "size() of unknown dim '" + n + "'");
      return size_term(d->second);
    }
    Func f;
    int arity;
    if (!func_from_name(e.name, f, arity)) spec_error(e, "unknown function '" + e.name + "'");
    if (static_cast<int>(e.args.size()) != arity)
      spec_error(e, fmt::format("{} takes {} argument(s)", e.name, arity));
    TermNode n;
    n.op = TermOp::Call;
    n.func = f;
    for (const auto& a : e.args) n.args.push_back(build(*a, s));
    return inst_.body.add(std::move(n));
  }

  int build_reduce(const Expr& e, Scope& s) {
    int extent;
    if (e.bound) {
      extent = build(*e.bound, s);
      if (e.inclusive) extent = node(TermOp::Add, {extent, constant(1)}, true);
    } else {
      auto d = dims_.find(e.name);
      if (d == dims_.end())
        spec_error(e, "reduction over '" + e.name + "', which is not an operand dim");
      extent = size_term(d->second);
    }
    int var = new_var(e.name);
    auto saved = s.scalars;
    s.scalars[e.name] = var;
    int body = build(*e.args[0], s);
    s.scalars = saved;
    TermNode n;
    n.op = TermOp::Reduce;
    n.reducer = e.reducer;
    n.var = var;
    n.args = {extent, body};
    return inst_.body.add(std::move(n));
  }

  int build_access(const Expr& e, Scope& s) {
    int k = op_.operand_index(e.name);
    if (k < 0) spec_error(e, "'" + e.name + "' is not an operand");
    std::vector<Item> items = e.items;
    if (e.bare) {
      items.clear();
      for (const Item& p : op_.shapes[k].items) {
        Item it = p;
        it.position.clear();
        if (!p.group && p.name.empty()) {  // a literal dim: index 0
          auto zero = std::make_shared<Expr>();
          zero->kind = Expr::Number;
          it.expr = zero;
        } else if (!p.group) {
          auto name = std::make_shared<Expr>();
          name->kind = Expr::Name;
          name->name = p.name;
          it.expr = name;
        }
        items.push_back(it);
      }
    }
    std::vector<int> idx;
    for (const Item& it : items) {
      if (!it.group) {
        idx.push_back(build(*it.expr, s));
      } else if (!it.reshape_from.empty()) {
        reshape_indices(e, k, it, s, idx);
      } else {
        group_indices(e, k, it, s, idx);
      }
    }
    if (idx.size() != shapes_[k].size())
      spec_error(e, fmt::format("access has {} indices but '{}' has rank {}", idx.size(), e.name,
                                shapes_[k].size()));
    TermNode n;
    n.op = TermOp::Load;
    n.operand = k;
    n.args = std::move(idx);
    return inst_.body.add(std::move(n));
  }

  void group_indices(const Expr& e, int k, const Item& it, Scope& s, std::vector<int>& idx) {
    auto own = operand_groups_[k].find(it.name);
    if (own == operand_groups_[k].end()) spec_error(e, "'" + e.name + "' has no group " + it.name);
    const std::vector<Dim>& mine = own->second;
    const std::vector<Dim>& merged = groups_.at(it.name);
    if (it.each) {
      Scope inner = s;
      inner.elem_group = it.name;
      for (std::size_t j = 0; j < mine.size(); ++j) {
        inner.elem = static_cast<int>(j);
        idx.push_back(build(*it.each, inner));
      }
      return;
    }
    auto vars = s.groups.find(it.name);
    if (vars == s.groups.end()) spec_error(e, "group " + it.name + " has no indices here");
    std::size_t off = merged.size() - mine.size();
    for (std::size_t j = 0; j < mine.size(); ++j) {
      bool stretched = mine[j].is_const() && mine[j].value() == 1 &&
                       !(merged[off + j].is_const() && merged[off + j].value() == 1);
      idx.push_back(stretched ? constant(0) : index(vars->second[off + j]));
    }
  }

  // x[*S~T]: x's group S indexed by the row-major position of the output group T.
  void reshape_indices(const Expr& e, int k, const Item& it, Scope& s, std::vector<int>& idx) {
    auto vars = s.groups.find(it.reshape_from);
    if (vars == s.groups.end()) spec_error(e, "group " + it.reshape_from + " has no indices here");
    const std::vector<Dim>& tdims = groups_.at(it.reshape_from);
    const std::vector<Dim>& sdims = operand_groups_[k].at(it.name);
    int lin = constant(0);
    for (std::size_t j = 0; j < tdims.size(); ++j) {
      lin = node(TermOp::Mul, {lin, size_term(tdims[j])}, true);
      lin = node(TermOp::Add, {lin, index(vars->second[j])}, true);
    }
    for (std::size_t j = 0; j < sdims.size(); ++j) {
      Dim stride(1);
      for (std::size_t m = j + 1; m < sdims.size(); ++m) stride = stride * sdims[m];
      int q = node(TermOp::FloorDiv, {lin, size_term(stride)}, true);
      idx.push_back(j == 0 ? q : node(TermOp::Mod, {q, size_term(sdims[j])}, true));
    }
  }

  const OpSpec& op_;
  const std::vector<std::vector<Dim>>& shapes_;
  SourceLoc loc_;
  const OpTable& table_;
  std::map<std::string, int> inline_args_;  // inside apply(): the applied op's operands
  AttrMap attrs_;
  std::map<std::string, Dim> dims_;
  std::map<std::string, int> dim_owner_;
  std::map<std::string, std::vector<Dim>> groups_;
  std::map<std::string, int> group_owner_;
  std::vector<std::map<std::string, std::vector<Dim>>> operand_groups_;
  Scope scope_;
  OpInstance inst_;
};

}  // namespace

OpInstance instantiate(const OpSpec& op, const std::vector<std::vector<Dim>>& operand_shapes,
                       const AttrMap& attrs, const SourceLoc& loc, const OpTable* table) {
  return Instantiator(op, operand_shapes, loc, table ? *table : OpTable::builtin()).run(attrs);
}

}  // namespace ts::sem

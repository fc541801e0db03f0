#include "tilesweep/ir/frontend.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "tilesweep/base/source.h"
#include "tilesweep/base/suggest.h"
#include "tilesweep/ir/ast.h"
#include "tilesweep/ir/graph_edit.h"
#include "tilesweep/semantics/dim_relation.h"

namespace ts::ir {

namespace {

// Dims (from a small grid, or a fixed sample of it when there are many dims) that satisfy the
// kernel's preconditions but where `a != b`; nullopt when there are none.
std::optional<sem::DimEnv> narrowing_example(const Kernel& k, const Dim& a, const Dim& b) {
  constexpr std::int64_t kSide = 8, kTrials = 4096;
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  for (std::int64_t t = 0; t < kTrials; ++t) {
    sem::DimEnv env;
    std::int64_t rest = t;
    bool grid = static_cast<double>(k.dims.size()) * std::log(static_cast<double>(kSide)) <=
                std::log(static_cast<double>(kTrials));
    for (const auto& d : k.dims) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      env[d] = 1 + (grid ? rest % kSide : static_cast<std::int64_t>((state >> 33) % kSide));
      rest /= kSide;
    }
    if (grid && rest > 0) break;
    bool holds = true;
    for (const auto& p : k.preconditions) {
      auto h = p.holds(env);
      holds = holds && h && *h;
    }
    auto x = a.evaluate(env), y = b.evaluate(env);
    if (holds && x && y && *x != *y) return env;
  }
  return std::nullopt;
}

std::string describe(const sem::DimEnv& env) {
  std::string s;
  for (const auto& [k, v] : env) s += (s.empty() ? "" : ", ") + k + " = " + std::to_string(v);
  return s;
}

constexpr int kMaxInlineDepth = 64;
// Each expression's tree is at most kMaxExpressionHeight deep, but inlined helpers stack their
// evaluations: this bounds the total, so `eval` never recurses past the stack.
constexpr int kMaxEvalDepth = 2 * kMaxExpressionHeight;

// A value during elaboration: a tensor (graph node) or a compile-time constant.
struct Value {
  enum Kind { Tensor, Number, DimV, Bool, Tuple, DTypeName, None } kind = None;
  int node = -1;
  std::string dtype;  // DTypeName: as in x.astype(bf16)
  double number = 0;
  bool is_int = false;
  Dim dim;
  bool flag = false;
  std::vector<Value> items;

  static Value tensor(int n) {
    Value v;
    v.kind = Tensor;
    v.node = n;
    return v;
  }
  static Value num(double x, bool i) {
    Value v;
    v.kind = Number;
    v.number = x;
    v.is_int = i;
    return v;
  }
  static Value of_dim(Dim d) {
    if (d.is_const()) return num(static_cast<double>(d.value()), true);
    Value v;
    v.kind = DimV;
    v.dim = std::move(d);
    return v;
  }
};

const char* kind_name(const Value& v) {
  switch (v.kind) {
    case Value::Tensor:
      return "a tensor";
    case Value::Number:
      return "a number";
    case Value::DimV:
      return "a dim";
    case Value::Bool:
      return "a bool";
    case Value::Tuple:
      return "a tuple";
    case Value::DTypeName:
      return "a dtype";
    case Value::None:
      return "None";
  }
  return "?";
}

using Scope = std::map<std::string, Value>;

bool is_kernel(const AstFunction& f) {
  for (const auto& p : f.params)
    if (!p.annotation) return false;
  return true;
}

class Elaborator {
 public:
  Elaborator(const AstModule& m, const sem::OpTable& ops) : ops_(ops) {
    std::map<std::string, int> first_line;
    for (const auto& f : m.functions) {
      auto [it, inserted] = first_line.emplace(f.name, f.loc.line);
      if (!inserted) fail(f.loc, "'{}' is defined twice (first at line {})", f.name, it->second);
      // A kernel may share an op's name (the `matmul` kernel); calls by that name still mean
      // the op. A helper may not: its calls would be ambiguous.
      if (ops.find(f.name)) {
        if (!is_kernel(f))
          fail(f.loc,
               "helper '{}' has the name of a built-in op; choose another name for the function",
               f.name);
        continue;
      }
      functions_.emplace(f.name, &f);
    }
  }

  Kernel kernel(const AstFunction& f) {
    k_ = Kernel{};
    k_.name = f.name;
    k_.loc = f.loc;
    Scope scope;
    for (const auto& p : f.params) scope[p.name] = parameter(p);
    stack_ = {f.name};
    Value result = run_body(f, scope);
    outputs(f, result);
    return std::move(k_);
  }

 private:
  // ---- parameters and annotations ----
  struct TypeAnn {
    DType dtype = DType::F32;
    bool scalar = true;
    std::vector<Dim> shape;
  };

  TypeAnn annotation(const AstExpr& a, bool declare_dims) {
    TypeAnn t;
    const AstExpr* name = &a;
    if (a.kind == AstExpr::Subscript) {
      name = a.args[0].get();
      t.scalar = false;
    }
    if (name->kind != AstExpr::Name) fail(a.loc, "expected a type like f32[M, N] or f32");
    auto dt = parse_dtype(name->name);
    if (!dt)
      fail(name->loc, "unknown dtype '{}' (expected f32, bf16, f16 or f8){}", name->name,
           did_you_mean(name->name, {"f32", "bf16", "f16", "f8"}));
    t.dtype = *dt;
    if (!t.scalar) {
      for (const auto& s : a.slices) {
        if (s.is_slice) fail(a.loc, "a shape lists dims separated by commas, like f32[M, N]");
        t.shape.push_back(dim_expr(*s.index, declare_dims));
        if (t.shape.back().is_const() && t.shape.back().value() <= 0)
          fail(
              s.index->loc,
              "a dim must be positive, not {}: a tensor needs at least one element along every dim",
              t.shape.back().value());
      }
    }
    return t;
  }

  Dim dim_expr(const AstExpr& e, bool declare) {
    switch (e.kind) {
      case AstExpr::Int:
        if (e.int_value < 0) fail(e.loc, "a dim cannot be negative");
        return Dim(e.int_value);
      case AstExpr::Name: {
        if (parse_dtype(e.name)) fail(e.loc, "'{}' is a dtype, not a dim", e.name);
        bool known = std::find(k_.dims.begin(), k_.dims.end(), e.name) != k_.dims.end();
        if (!known) {
          if (!declare) fail(e.loc, "unknown dim '{}' (dims: {})", e.name, join(k_.dims));
          k_.dims.push_back(e.name);
        }
        return Dim::symbol(e.name);
      }
      case AstExpr::Binary: {
        Dim a = dim_expr(*e.args[0], declare), b = dim_expr(*e.args[1], declare);
        try {
          if (e.name == "+") return a + b;
          if (e.name == "-") return a - b;
          if (e.name == "*") return a * b;
          if (e.name == "//") {
            if (b.is_const() && b.value() <= 0) fail(e.loc, "division of a dim by {}", b.str());
            return floordiv(a, b);
          }
        } catch (const UserError& x) {
          if (x.loc().known()) throw;
          fail(e.loc, "{}", x.message());  // dim arithmetic overflow: say where
        }
        fail(e.loc, "'{}' is not allowed in a dim (use + - * //)", e.name);
      }
      default:
        fail(e.loc, "expected a dim: a name, an integer, or + - * // of them");
    }
  }

  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? "none" : s;
  }

  Value parameter(const AstParam& p) {
    TypeAnn t = annotation(*p.annotation, true);
    Param param;
    param.name = p.name;
    param.scalar = t.scalar;
    param.dtype = t.dtype;
    param.shape = t.shape;
    param.loc = p.loc;
    if (p.default_value) {
      if (!t.scalar) fail(p.default_value->loc, "only scalar parameters may have a default");
      Value d = eval(*p.default_value, empty_);
      if (d.kind != Value::Number) fail(p.default_value->loc, "a default must be a number");
      param.default_value = d.number;
    }
    Node n;
    n.op = "input";
    n.shape = t.shape;
    n.dtype = t.dtype;
    // A scalar parameter is a Python number at the call (NKI passes `eps` as one): weak, like a
    // literal, so `x + eps` keeps x's dtype instead of widening a bf16 kernel to f32.
    n.weak = t.scalar;
    n.param = static_cast<int>(k_.params.size());
    n.label = p.name;
    n.loc = p.loc;
    n.origin = static_cast<int>(k_.nodes.size());
    param.node = push(std::move(n));
    k_.params.push_back(std::move(param));
    return Value::tensor(k_.params.back().node);
  }

  int push(Node n) {
    k_.nodes.push_back(std::move(n));
    return static_cast<int>(k_.nodes.size()) - 1;
  }

  // ---- statements ----
  Value run_body(const AstFunction& f, Scope& scope) {
    for (std::size_t i = 0; i < f.body.size(); ++i) {
      const AstStmt& s = f.body[i];
      switch (s.kind) {
        case AstStmt::Expr:
          break;  // docstring or pass
        case AstStmt::Assign:
          assign(s, scope);
          break;
        case AstStmt::Return: {
          for (std::size_t j = i + 1; j < f.body.size(); ++j)
            if (f.body[j].kind != AstStmt::Expr)
              fail(f.body[j].loc, "unreachable statement after return");
          if (!s.value) fail(s.loc, "'{}' must return a value", f.name);
          return eval(*s.value, scope);
        }
      }
    }
    fail(f.loc, "'{}' has no return statement; a kernel or helper must end with `return ...`",
         f.name);
  }

  void assign(const AstStmt& s, Scope& scope) {
    Value v = eval(*s.value, scope);
    for (const auto& t : s.targets) {
      if (std::find(k_.dims.begin(), k_.dims.end(), t) != k_.dims.end())
        fail(s.loc, "'{}' is a dim of kernel '{}'; choose another name for the variable", t,
             k_.name);
      if (ops_.find(t) || functions_.count(t))
        fail(s.loc, "'{}' is the name of {}; choose another name for the variable", t,
             ops_.find(t) ? "an op" : "a function");
    }
    if (s.targets.size() == 1) {
      bind(scope, s.targets[0], v);
      return;
    }
    if (v.kind != Value::Tuple || v.items.size() != s.targets.size())
      fail(s.loc, "cannot unpack {} into {} names",
           v.kind == Value::Tuple ? fmt::format("{} values", v.items.size()) : kind_name(v),
           s.targets.size());
    for (std::size_t i = 0; i < s.targets.size(); ++i) bind(scope, s.targets[i], v.items[i]);
  }

  void bind(Scope& scope, const std::string& name, const Value& v) {
    scope[name] = v;
    if (v.kind == Value::Tensor && k_.nodes[v.node].label.empty()) k_.nodes[v.node].label = name;
  }

  // ---- expressions ----
  struct EvalDepth {
    int& depth;
    EvalDepth(int& d, const SourceLoc& loc) : depth(d) {
      if (++depth > kMaxEvalDepth) {
        --depth;  // the destructor does not run when the constructor throws
        fail(loc,
             "expression nested too deeply (more than {} levels, counting inlined helper calls); "
             "split it into named steps",
             kMaxEvalDepth);
      }
    }
    ~EvalDepth() { --depth; }
  };

  Value eval(const AstExpr& e, Scope& scope) {
    EvalDepth guard(eval_depth_, e.loc);
    switch (e.kind) {
      case AstExpr::Name:
        return name(e, scope);
      case AstExpr::Int:
        return Value::num(static_cast<double>(e.int_value), true);
      case AstExpr::Float:
        return Value::num(e.float_value, false);
      case AstExpr::String:
        fail(e.loc, "strings are not values in the kernel language");
      case AstExpr::Unary: {
        Value v = eval(*e.args[0], scope);
        if (e.name == "+") return v;
        if (v.kind == Value::Number) return Value::num(-v.number, v.is_int);
        if (v.kind == Value::DimV) return Value::of_dim(-v.dim);
        if (v.kind == Value::Tensor) return op_call("neg", {v}, {}, e.loc);
        fail(e.loc, "cannot negate {}", kind_name(v));
      }
      case AstExpr::Binary:
        return binary(e, scope);
      case AstExpr::Call:
        return call(e, scope);
      case AstExpr::Attribute: {
        Value base = eval(*e.args[0], scope);
        if (base.kind == Value::Tensor && e.name == "T")
          return op_call("transpose", {base}, {}, e.loc);
        fail(e.loc,
             "unknown attribute '.{}' of {} (only .T is supported; ops are called as methods, "
             "like x.astype(bf16))",
             e.name, kind_name(base));
      }
      case AstExpr::Subscript:
        return subscript(e, scope);
      case AstExpr::Tuple: {
        Value t;
        t.kind = Value::Tuple;
        for (const auto& a : e.args) t.items.push_back(eval(*a, scope));
        return t;
      }
    }
    fail(e.loc, "unsupported expression");
  }

  Value name(const AstExpr& e, Scope& scope) {
    if (auto it = scope.find(e.name); it != scope.end()) return it->second;
    if (std::find(k_.dims.begin(), k_.dims.end(), e.name) != k_.dims.end())
      return Value::of_dim(Dim::symbol(e.name));
    if (e.name == "True" || e.name == "False") {
      Value v;
      v.kind = Value::Bool;
      v.flag = e.name == "True";
      return v;
    }
    if (e.name == "None") return Value{};
    if (e.name == "inf") return Value::num(std::numeric_limits<double>::infinity(), false);
    if (parse_dtype(e.name)) {
      Value v;
      v.kind = Value::DTypeName;
      v.dtype = e.name;
      return v;
    }
    if (ops_.find(e.name) || functions_.count(e.name))
      fail(e.loc, "'{}' is a function; call it like {}(...)", e.name, e.name);
    std::vector<std::string> names;
    for (const auto& [n, v] : scope) names.push_back(n);
    names.insert(names.end(), k_.dims.begin(), k_.dims.end());
    fail(e.loc, "unknown name '{}'{}", e.name, did_you_mean(e.name, names));
  }

  Value binary(const AstExpr& e, Scope& scope) {
    Value a = eval(*e.args[0], scope), b = eval(*e.args[1], scope);
    const std::string& op = e.name;
    bool tensor = a.kind == Value::Tensor || b.kind == Value::Tensor;
    if (!tensor) return constant_binary(e, a, b);
    if (op == "**") {
      if (b.kind == Value::Number && b.number == 2) return op_call("square", {a}, {}, e.loc);
      if (b.kind == Value::Number && b.number == 0.5) return op_call("sqrt", {a}, {}, e.loc);
      fail(e.loc,
           "'**' on tensors supports only the exponents 2 and 0.5; use square, sqrt, exp or log");
    }
    static const std::map<std::string, std::string> ops = {
        {"+", "add"},         {"-", "sub"},       {"*", "mul"},
        {"/", "div"},         {"@", "matmul"},    {"<", "less"},
        {"<=", "less_equal"}, {">", "greater"},   {">=", "greater_equal"},
        {"==", "equal"},      {"!=", "not_equal"}};
    auto it = ops.find(op);
    if (it == ops.end()) fail(e.loc, "operator '{}' is not supported on tensors", op);
    return op_call(it->second, {a, b}, {}, e.loc);
  }

  static std::optional<bool> compare_numbers(const std::string& op, double x, double y) {
    if (op == "<") return x < y;
    if (op == "<=") return x <= y;
    if (op == ">") return x > y;
    if (op == ">=") return x >= y;
    if (op == "==") return x == y;
    if (op == "!=") return x != y;
    return std::nullopt;
  }

  Value constant_binary(const AstExpr& e, const Value& a, const Value& b) {
    auto is_num = [](const Value& v) { return v.kind == Value::Number || v.kind == Value::DimV; };
    if (!is_num(a) || !is_num(b))
      fail(e.loc, "operator '{}' cannot combine {} and {}", e.name, kind_name(a), kind_name(b));
    const std::string& op = e.name;
    bool ints = (a.kind == Value::DimV || a.is_int) && (b.kind == Value::DimV || b.is_int);
    if (a.kind == Value::DimV || b.kind == Value::DimV) {
      if (!ints) fail(e.loc, "a dim can only be combined with integers (use // for division)");
      Dim x = a.kind == Value::DimV ? a.dim : Dim(static_cast<std::int64_t>(a.number));
      Dim y = b.kind == Value::DimV ? b.dim : Dim(static_cast<std::int64_t>(b.number));
      if (op == "+") return Value::of_dim(x + y);
      if (op == "-") return Value::of_dim(x - y);
      if (op == "*") return Value::of_dim(x * y);
      if (op == "//" || op == "%") {
        if (y.is_const() && y.value() <= 0) fail(e.loc, "division of a dim by {}", y.str());
        return Value::of_dim(op == "//" ? floordiv(x, y) : x - floordiv(x, y) * y);
      }
      if (compare_numbers(op, 0, 0))
        fail(
            e.loc,
            "a comparison of dims ({} {} {}) is not a value: dims are unknown until bound; compare "
            "index tensors such as iota(N, axis=0) instead",
            x.str(), op, y.str());
      fail(e.loc, "operator '{}' is not supported on dims (use + - * // %)", op);
    }
    double x = a.number, y = b.number;
    if (auto c = compare_numbers(op, x, y)) {
      Value v;
      v.kind = Value::Bool;
      v.flag = *c;
      return v;
    }
    if (op == "+") return Value::num(x + y, ints);
    if (op == "-") return Value::num(x - y, ints);
    if (op == "*") return Value::num(x * y, ints);
    if (op == "/") {
      if (y == 0) fail(e.loc, "division by zero");
      return Value::num(x / y, false);
    }
    if (op == "//" || op == "%") {
      if (y == 0) fail(e.loc, "division by zero");
      double q = std::floor(x / y);
      return Value::num(op == "//" ? q : x - q * y, ints);
    }
    if (op == "**") return Value::num(std::pow(x, y), ints && y >= 0);
    fail(e.loc, "operator '{}' is not supported on numbers", op);
  }

  Value call(const AstExpr& e, Scope& scope) {
    const AstExpr& callee = *e.args[0];
    std::vector<Value> args;
    if (callee.kind == AstExpr::Attribute) {
      // x.astype(bf16), x.sum(axis=1): an op called on a tensor, the tensor its first operand.
      const AstExpr& base = *callee.args[0];
      bool unknown_name = base.kind == AstExpr::Name && !scope.count(base.name) &&
                          std::find(k_.dims.begin(), k_.dims.end(), base.name) == k_.dims.end();
      if (unknown_name || !ops_.find(callee.name))
        fail(callee.loc, "write {}(...) without a module prefix: kernel ops are built in{}",
             callee.name, unknown_name ? "" : " (or x.astype(dtype) for a cast)");
      Value self = eval(base, scope);
      if (self.kind != Value::Tensor)
        fail(callee.loc, "'.{}(...)' needs a tensor before the dot, not {}", callee.name,
             kind_name(self));
      args.push_back(self);
    } else if (callee.kind != AstExpr::Name) {
      fail(callee.loc, "only named functions can be called");
    }
    for (std::size_t i = 1; i < e.args.size(); ++i) args.push_back(eval(*e.args[i], scope));
    std::vector<std::pair<std::string, Value>> kws;
    for (const auto& k : e.keywords) kws.emplace_back(k.name, eval(*k.value, scope));
    if (callee.kind == AstExpr::Attribute) return op_call(callee.name, args, kws, e.loc);
    if (auto f = functions_.find(callee.name); f != functions_.end())
      return inline_call(*f->second, args, kws, e.loc);
    if (!ops_.find(callee.name)) {
      std::vector<std::string> names = ops_.names();
      for (const auto& [n, f] : functions_) names.push_back(n);
      fail(callee.loc, "unknown op '{}'{}", callee.name, did_you_mean(callee.name, names));
    }
    return op_call(callee.name, args, kws, e.loc);
  }

  Value inline_call(const AstFunction& f, const std::vector<Value>& args,
                    const std::vector<std::pair<std::string, Value>>& kws, const SourceLoc& loc) {
    if (std::find(stack_.begin(), stack_.end(), f.name) != stack_.end())
      fail(loc, "recursive call to '{}': helpers are inlined, so recursion is not supported",
           f.name);
    if (stack_.size() >= kMaxInlineDepth)
      fail(loc, "helper calls nested more than {} deep", kMaxInlineDepth);
    if (args.size() > f.params.size())
      fail(loc, "'{}' takes {} argument(s), got {}", f.name, f.params.size(), args.size());
    Scope scope;
    for (std::size_t i = 0; i < args.size(); ++i) scope[f.params[i].name] = args[i];
    for (const auto& [k, v] : kws) {
      auto p = std::find_if(f.params.begin(), f.params.end(),
                            [&](const AstParam& q) { return q.name == k; });
      if (p == f.params.end()) fail(loc, "'{}' has no parameter '{}'", f.name, k);
      if (scope.count(k)) fail(loc, "argument '{}' of '{}' given twice", k, f.name);
      scope[k] = v;
    }
    for (const auto& p : f.params) {
      if (scope.count(p.name)) continue;
      if (!p.default_value) fail(loc, "'{}' needs the argument '{}'", f.name, p.name);
      scope[p.name] = eval(*p.default_value, empty_);
    }
    stack_.push_back(f.name);
    Value v = run_body(f, scope);
    stack_.pop_back();
    return v;
  }

  int materialize(const Value& v, const SourceLoc& loc, const std::string& what) {
    switch (v.kind) {
      case Value::Tensor:
        return v.node;
      case Value::Number: {
        int n = add_node("const", {}, {{"value", v.number}}, loc);
        k_.nodes[n].weak = true;
        return n;
      }
      case Value::DimV: {
        int n = add_node("dim", {}, {{"value", v.dim}}, loc);
        k_.nodes[n].weak = true;
        return n;
      }
      default:
        fail(loc, "{} must be a tensor or a number, not {}", what, kind_name(v));
    }
  }

  sem::AttrValue attr_value(const Value& v, const std::string& op, const std::string& arg,
                            const SourceLoc& loc) {
    switch (v.kind) {
      case Value::Bool:
        return v.flag;
      case Value::DTypeName:
        return v.dtype;
      case Value::Number:
        if (v.is_int) return static_cast<std::int64_t>(v.number);
        return v.number;
      case Value::DimV:
        return v.dim;
      case Value::Tuple: {
        std::vector<Dim> ds;
        for (const auto& x : v.items) {
          if (x.kind == Value::DimV)
            ds.push_back(x.dim);
          else if (x.kind == Value::Number && x.is_int)
            ds.push_back(Dim(static_cast<std::int64_t>(x.number)));
          else
            fail(loc, "argument '{}' of '{}' must hold integers or dims, not {}", arg, op,
                 kind_name(x));
        }
        return ds;
      }
      default:
        fail(loc, "argument '{}' of '{}' must be a constant, not {}", arg, op, kind_name(v));
    }
  }

  Value op_call(const std::string& name, std::vector<Value> args,
                std::vector<std::pair<std::string, Value>> kws, const SourceLoc& loc) {
    const sem::OpSpec& op = *ops_.find(name);
    if (name == "iota") iota_placement(args, kws, loc);
    if (op.fold && !args.empty() && args[0].kind == Value::Tuple) {
      std::vector<Value> parts = args[0].items;
      if (parts.size() < 2) fail(loc, "'{}' needs at least two tensors", name);
      args.erase(args.begin());
      Value acc = parts[0];
      for (std::size_t i = 1; i < parts.size(); ++i) {
        std::vector<Value> a = {acc, parts[i]};
        a.insert(a.end(), args.begin(), args.end());
        acc = op_call(name, a, kws, loc);
      }
      return acc;
    }
    if (args.size() > op.args.size())
      fail(loc, "'{}' takes at most {} argument(s) ({}), got {}", name, op.args.size(),
           join(op.args), args.size());
    std::map<std::string, Value> bound;
    for (std::size_t i = 0; i < args.size(); ++i) bound[op.args[i]] = args[i];
    for (const auto& [k, v] : kws) {
      if (std::find(op.args.begin(), op.args.end(), k) == op.args.end())
        fail(loc, "'{}' has no argument '{}' (arguments: {}){}", name, k, join(op.args),
             did_you_mean(k, op.args));
      if (bound.count(k)) fail(loc, "argument '{}' of '{}' given twice", k, name);
      bound[k] = v;
    }
    std::vector<int> inputs;
    for (const auto& o : op.operands) {
      auto it = bound.find(o);
      if (it == bound.end()) fail(loc, "'{}' needs the argument '{}'", name, o);
      inputs.push_back(materialize(it->second, loc, fmt::format("argument '{}' of '{}'", o, name)));
    }
    sem::AttrMap attrs;
    for (const auto& [k, v] : bound) {
      if (op.operand_index(k) >= 0) continue;
      if (v.kind == Value::None) continue;
      attrs[k] = attr_value(v, name, k, loc);
    }
    return Value::tensor(add_node(name, inputs, attrs, loc));
  }

  // iota(n, axis=k, ndim=r): the spec's lead/trail groups ([1] * k and [1] * (r - 1 - k)) from
  // the axis and the rank the user gives (ndim defaults to max(2, k + 1)).
  void iota_placement(const std::vector<Value>& args,
                      std::vector<std::pair<std::string, Value>>& kws, const SourceLoc& loc) {
    std::int64_t axis = 0, ndim = -1;
    std::vector<std::pair<std::string, Value>> rest;
    for (const auto& [k, v] : kws) {
      if (k != "axis" && k != "ndim") {
        rest.emplace_back(k, v);
        continue;
      }
      if (v.kind != Value::Number || !v.is_int || v.number < 0)
        fail(loc, "argument '{}' of 'iota' must be a non-negative integer, not {}", k,
             v.kind == Value::Number ? fmt::format("{}", v.number) : kind_name(v));
      (k == "axis" ? axis : ndim) = static_cast<std::int64_t>(v.number);
    }
    if (args.size() > 1)
      fail(loc, "'iota' takes one positional argument (the length); give axis= and ndim= by name");
    if (ndim < 0) ndim = std::max<std::int64_t>(2, axis + 1);
    if (axis >= ndim || ndim > 8)
      fail(loc, "'iota': axis {} needs 0 <= axis < ndim <= 8 (ndim is {})", axis, ndim);
    std::vector<Dim> lead(static_cast<std::size_t>(axis), Dim(1));
    std::vector<Dim> trail(static_cast<std::size_t>(ndim - 1 - axis), Dim(1));
    rest.emplace_back("lead", tuple(lead));
    rest.emplace_back("trail", tuple(trail));
    kws = std::move(rest);
  }

  int add_node(const std::string& name, std::vector<int> inputs, const sem::AttrMap& attrs,
               const SourceLoc& loc) {
    const sem::OpSpec* spec = ops_.find(name);
    TS_CHECK(spec, "op '{}' missing from the table", name);
    try {
      return add_op(k_, *spec, std::move(inputs), attrs, loc);
    } catch (const UserError& x) {
      if (x.loc().known()) throw;
      fail(loc, "'{}': {}", name, x.message());  // dim arithmetic overflow: say where
    }
  }

  Value subscript(const AstExpr& e, Scope& scope) {
    Value base = eval(*e.args[0], scope);
    if (base.kind != Value::Tensor)
      fail(e.loc, "only tensors can be indexed, not {}", kind_name(base));
    const std::vector<Dim> shape = k_.nodes[base.node].shape;
    if (e.slices.size() > shape.size())
      fail(e.loc, "too many indices ({}) for a tensor of rank {} {}", e.slices.size(), shape.size(),
           format_shape(shape));
    std::vector<Dim> begin, end, step, kept;
    bool identity = true, drops = false;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      const Dim& d = shape[i];
      if (i >= e.slices.size()) {
        begin.push_back(0), end.push_back(d), step.push_back(1), kept.push_back(d);
        continue;
      }
      const AstSlice& s = e.slices[i];
      if (!s.is_slice) {
        Dim at = bound(*s.index, d, scope, e.loc);
        begin.push_back(at), end.push_back(at + Dim(1)), step.push_back(1);
        identity = false, drops = true;
        continue;
      }
      Dim st(1);
      if (s.step) {
        Value sv = eval(*s.step, scope);
        if (sv.kind != Value::Number || !sv.is_int || sv.number < 1)
          fail(s.step->loc, "a slice step must be a positive integer constant");
        st = Dim(static_cast<std::int64_t>(sv.number));
      }
      Dim lo = s.lo ? bound(*s.lo, d, scope, e.loc) : Dim(0);
      Dim hi = s.hi ? bound(*s.hi, d, scope, e.loc) : d;
      identity = identity && lo == Dim(0) && hi == d && st == Dim(1);
      begin.push_back(lo), end.push_back(hi), step.push_back(st);
      kept.push_back(floordiv(hi - lo + st - Dim(1), st));
    }
    if (identity) return base;
    Value sliced =
        op_call("slice", {base},
                {{"begin", tuple(begin)}, {"end", tuple(end)}, {"step", tuple(step)}}, e.loc);
    if (!drops) return sliced;
    return op_call("reshape", {sliced}, {{"shape", tuple(kept)}}, e.loc);
  }

  static Value tuple(const std::vector<Dim>& ds) {
    Value t;
    t.kind = Value::Tuple;
    for (const auto& d : ds) t.items.push_back(Value::of_dim(d));
    return t;
  }

  // A slice bound: an integer or dim expression; negative constants count from the end.
  Dim bound(const AstExpr& x, const Dim& size, Scope& scope, const SourceLoc& loc) {
    Value v = eval(x, scope);
    if (v.kind == Value::DimV) return v.dim;
    if (v.kind != Value::Number || !v.is_int)
      fail(x.loc, "a slice bound must be an integer or a dim expression, not {}", kind_name(v));
    auto i = static_cast<std::int64_t>(v.number);
    if (i < 0) {
      if (size.is_const() && -i > size.value())
        fail(loc, "index {} is out of range for a dim of size {}", i, size.str());
      return size + Dim(i);
    }
    if (size.is_const() && i > size.value())
      fail(x.loc, "index {} is out of range for a dim of size {}", i, size.str());
    return Dim(i);
  }

  // ---- outputs ----
  void outputs(const AstFunction& f, const Value& result) {
    std::vector<Value> values =
        result.kind == Value::Tuple ? result.items : std::vector<Value>{result};
    for (const auto& v : values) k_.outputs.push_back(materialize(v, f.loc, "a kernel output"));
    if (!f.returns) return;
    std::vector<const AstExpr*> anns;
    if (f.returns->kind == AstExpr::Tuple)
      for (const auto& a : f.returns->args) anns.push_back(a.get());
    else
      anns.push_back(f.returns.get());
    if (anns.size() != k_.outputs.size())
      fail(f.returns->loc, "'{}' returns {} value(s) but its annotation declares {}", f.name,
           k_.outputs.size(), anns.size());
    for (std::size_t i = 0; i < anns.size(); ++i) {
      TypeAnn t = annotation(*anns[i], false);
      const Node& n = k_.nodes[k_.outputs[i]];
      std::vector<Dim> want = t.scalar ? std::vector<Dim>{} : t.shape;
      bool ok = want.size() == n.shape.size();
      for (std::size_t j = 0; ok && j < want.size(); ++j) {
        if (want[j] == n.shape[j]) continue;
        // A declared shape that differs from the inferred one is an error, never a silent
        // restriction of the dims: `-> f32[M, N // 2]` on `x[:, ::2]` (width (N + 1) // 2)
        // would otherwise make the kernel one of even N only. It is kept (as a precondition
        // the prover checks) only where the kernel's own preconditions already imply it, as
        // in a 2x2 max pool whose halves must match, or a reshape's C == D * H.
        if (!(want[j].has_floordiv() || n.shape[j].has_floordiv() || !k_.preconditions.empty())) {
          ok = false;
          break;
        }
        if (auto env = narrowing_example(k_, n.shape[j], want[j]))
          fail(anns[i]->loc,
               "'{}' returns {}{} but its annotation declares {}{}: they differ at {}; write the "
               "inferred shape (or constrain the parameters' shapes)",
               f.name, dtype_name(n.dtype), format_shape(n.shape), dtype_name(t.dtype),
               format_shape(want), describe(*env));
        declared_precondition(n.shape[j], want[j], anns[i]->loc);
      }
      if (!ok)
        fail(anns[i]->loc, "'{}' returns {}{} but its annotation declares {}{}", f.name,
             dtype_name(n.dtype), format_shape(n.shape), dtype_name(t.dtype), format_shape(want));
      if (t.dtype != n.dtype && !n.weak)
        fail(anns[i]->loc, "'{}' returns {} values but its annotation declares {}: {}", f.name,
             dtype_name(n.dtype), dtype_name(t.dtype), dtype_origin(k_.outputs[i], t.dtype));
    }
  }

  // A declared return dim the kernel's preconditions imply: kept for the prover to check
  // (ir/verify's declared_shapes), in the same form as the relation it follows from.
  void declared_precondition(const Dim& got, const Dim& want, const SourceLoc& loc) {
    sem::Precondition p{got, sem::BinOp::Eq, want,
                        fmt::format("the declared return shape at line {}", loc.line), loc};
    if (!got.has_floordiv() && !want.has_floordiv()) {
      sem::DimRelation r = sem::relate(got, want);
      if (r.kind == sem::DimRelation::Relation) {
        p.lhs = r.lhs;
        p.rhs = r.rhs;
      }
    }
    ir::add_precondition(k_, std::move(p));
  }

  // How a value, here called `what`, is described in a message.
  std::string describe_node(int id) const {
    const Node& n = k_.nodes[id];
    if (n.param >= 0) return fmt::format("parameter '{}'", k_.params[n.param].name);
    if (!n.label.empty()) return fmt::format("'{}' (line {})", n.label, n.loc.line);
    return fmt::format("the '{}' at line {}", n.op, n.loc.line);
  }

  // Why output `id` has its dtype where `want` was declared: the value the dtype comes from (a
  // parameter, a cast, an iota), followed down the operands of that dtype, and the op where it
  // met values of another dtype and widened them; with the fix.
  std::string dtype_origin(int id, DType want) const {
    DType got = k_.nodes[id].dtype;
    int meet = -1, other = -1;
    for (int steps = 0; steps < static_cast<int>(k_.nodes.size()); ++steps) {
      const Node& n = k_.nodes[id];
      if (n.param >= 0 || !n.spec || !n.spec->dtype_fixed.empty() || !n.spec->dtype_cast.empty())
        break;
      int same = -1;
      for (int in : n.inputs) {
        const Node& x = k_.nodes[in];
        if (x.weak) continue;
        if (x.dtype == got && same < 0) same = in;
        if (x.dtype != got) meet = id, other = in;
      }
      if (same < 0) break;
      id = same;
    }
    std::string src = describe_node(id);
    std::string fix =
        k_.nodes[id].param >= 0
            ? fmt::format("{}.astype({})", k_.params[k_.nodes[id].param].name, dtype_name(want))
            : fmt::format("x.astype({}) on it", dtype_name(want));
    if (meet < 0)
      return fmt::format("the {} comes from {}; cast it with {}, or declare the result {}",
                         dtype_name(got), src, fix, dtype_name(got));
    return fmt::format(
        "{} is {} and meets {} values of {} in '{}' at line {}, which promotes them to {}; cast it "
        "with {}, or declare the result {}",
        src, dtype_name(got), dtype_name(k_.nodes[other].dtype), describe_node(other),
        k_.nodes[meet].op, k_.nodes[meet].loc.line, dtype_name(got), fix, dtype_name(got));
  }

  const sem::OpTable& ops_;
  std::map<std::string, const AstFunction*> functions_;
  Kernel k_;
  std::vector<std::string> stack_;
  Scope empty_;
  int eval_depth_ = 0;
};

}  // namespace

const Kernel& Module::kernel(const std::string& name) const {
  std::vector<std::string> names;
  for (const auto& k : kernels) names.push_back(k.name);
  if (name.empty()) {
    if (kernels.size() == 1) return kernels[0];
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw UserError(fmt::format("error: '{}' has {} kernels ({}); choose one with --kernel", file,
                                kernels.size(), list));
  }
  for (const auto& k : kernels)
    if (k.name == name) return k;
  throw UserError(
      fmt::format("error: no kernel '{}' in '{}'{}", name, file, did_you_mean(name, names)));
}

Module parse_module(const std::string& text, const std::string& file, const sem::OpTable& ops) {
  check_text(file, text);
  AstModule ast = parse_syntax(text, file);
  Module m;
  m.file = file;
  Elaborator el(ast, ops);
  for (const auto& f : ast.functions)
    if (is_kernel(f)) m.kernels.push_back(el.kernel(f));
  if (m.kernels.empty())
    fail(SourceLoc{file, 1, 1},
         "no kernels in this file: a kernel is a `def` whose parameters all have types, like `def "
         "k(x: f32[M, N]) -> f32[M, N]:`");
  return m;
}

Module load_module(const std::string& path, const sem::OpTable& ops) {
  return parse_module(read_text_file(path), path, ops);
}

}  // namespace ts::ir

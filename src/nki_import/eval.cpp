// Expressions: names, constants, attributes, subscripts, arithmetic and calls.
#include <cmath>
#include <set>

#include "translator.h"

namespace ts::nki {

namespace {

using K = Value::Kind;

// nl.tile_size: the documented hardware tile limits (S3).
const std::map<std::string, std::int64_t>& tile_sizes() {
  static const std::map<std::string, std::int64_t> k = {{"pmax", 128},
                                                        {"psum_fmax", 2048 / 4},
                                                        {"gemm_stationary_fmax", 128},
                                                        {"gemm_moving_fmax", 512},
                                                        {"bn_stats_fmax", 512},
                                                        {"psum_min_align", 4},
                                                        {"sbuf_min_align", 1}};
  return k;
}

std::optional<ir::DType> dtype_named(const std::string& n) {
  if (n == "float32" || n == "tfloat32" || n == "float") return ir::DType::F32;
  if (n == "bfloat16") return ir::DType::BF16;
  if (n == "float16") return ir::DType::F16;
  if (n == "float8_e4m3" || n == "float8_e5m2") return ir::DType::F8;
  return std::nullopt;
}

}  // namespace

Value Translator::eval(const ExprPtr& e) { return eval_into(e, nullptr, false); }

Value Translator::eval_into(const ExprPtr& e, const Value* dst, bool accumulate) {
  const Expr& x = *e;
  Value v;
  switch (x.kind) {
    case ExprKind::Name:
      v = lookup(x);
      break;
    case ExprKind::Int: {
      std::size_t used = 0;
      long long n = 0;
      try {
        n = std::stoll(x.text, &used, 0);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != x.text.size())
        throw UserError(x.loc, fmt::format("integer '{}' is out of range", x.text));
      v = Value::integer(static_cast<std::int64_t>(n));
      break;
    }
    case ExprKind::Float:
      v = Value::real(std::strtod(x.text.c_str(), nullptr));
      break;
    case ExprKind::Str:
      v.kind = K::Str, v.s = x.text;
      break;
    case ExprKind::True:
      v = Value::boolean(true);
      break;
    case ExprKind::False:
      v = Value::boolean(false);
      break;
    case ExprKind::None:
      break;
    case ExprKind::Ellipsis:
      v.kind = K::Ellipsis;
      break;
    case ExprKind::Attr:
      v = attribute(x);
      break;
    case ExprKind::Call:
      return call(x, dst, accumulate);
    case ExprKind::Subscript:
      v = subscript(x);
      break;
    case ExprKind::Slice: {
      v.kind = K::Slice;
      for (const ExprPtr& p : x.items) v.items.push_back(p ? eval(p) : Value::none());
      break;
    }
    case ExprKind::Tuple:
    case ExprKind::List: {
      std::vector<Value> items;
      for (const ExprPtr& p : x.items) items.push_back(eval(p));
      v = Value::tuple(std::move(items));
      break;
    }
    case ExprKind::Binary: {
      if (dst && (x.text == "+" || x.text == "-" || x.text == "*" || x.text == "/")) {
        Value l = eval(x.items[0]), r = eval(x.items[1]);
        if (l.tensor() || r.tensor()) {
          static const std::map<std::string, std::string> alu = {
              {"+", "add"}, {"-", "sub"}, {"*", "mul"}, {"/", "div"}};
          return elementwise(alu.at(x.text), l, r, dst, std::nullopt, accumulate, x.loc);
        }
      }
      v = binary(x);
      break;
    }
    case ExprKind::Unary:
      v = unary(x);
      break;
    case ExprKind::IfElse:
      v = truth(eval(x.items[1]), x.items[1]->loc) ? eval(x.items[0]) : eval(x.items[2]);
      break;
  }
  if (dst) return copy_into(v, dst, std::nullopt, x.loc);
  return v;
}

Value Translator::lookup(const Expr& e) {
  for (auto* scope : {&scopes_.back(), &scopes_.front()}) {
    auto it = scope->find(e.text);
    if (it != scope->end()) return it->second;
  }
  if (functions_.count(e.text)) {
    Value v;
    v.kind = K::Func;
    v.s = e.text;
    return v;
  }
  static const std::set<std::string> kBuiltins = {"range", "len",        "min",   "max",   "int",
                                                  "float", "abs",        "print", "tuple", "list",
                                                  "bool",  "isinstance", "round"};
  if (kBuiltins.count(e.text)) return Value::module("builtins." + e.text);
  throw UserError(e.loc, fmt::format("name '{}' is not defined", e.text));
}

Value Translator::attribute(const Expr& e) {
  Value obj = eval(e.items[0]);
  const std::string& a = e.text;
  if (obj.kind == K::Module) {
    if (obj.s == "nki" && (a == "language" || a == "isa" || a == "typing")) return Value::module(a);
    if (obj.s == "language.tile_size") {
      auto it = tile_sizes().find(a);
      if (it == tile_sizes().end())
        throw UserError(e.loc, fmt::format("nl.tile_size.{} is not known", a));
      return Value::integer(it->second);
    }
    if (obj.s == "language" || obj.s == "numpy") {
      if (auto dt = dtype_named(a)) {
        Value v;
        v.kind = K::DType;
        v.dtype = *dt;
        return v;
      }
      if (a == "int32" || a == "int8" || a == "uint8" || a == "int16" || a == "uint32" ||
          a == "bool_")
        throw UserError(
            e.loc, fmt::format("dtype {} is not supported: tilesweep models float types only", a));
    }
    return Value::module(obj.s + "." + a);
  }
  if (obj.kind == K::Array || obj.kind == K::View) {
    const Array& arr = arrays_[obj.array];
    if (obj.kind == K::Array && a == "shape") {
      std::vector<Value> dims;
      for (auto d : arr.shape) dims.push_back(Value::integer(d));
      return Value::tuple(std::move(dims));
    }
    if (a == "dtype") {
      Value v;
      v.kind = K::DType;
      v.dtype = arr.dtype;
      return v;
    }
    if (a == "shape")
      throw UserError(e.loc, ".shape of a subscripted array is not supported; use the array's");
    if (a == "broadcast_to") {  // a bound method: the call applies it (Translator::call)
      Value m = Value::module("method.broadcast_to");
      m.items = {obj};
      return m;
    }
  }
  if (obj.kind == K::Tuple && (a == "p" || a == "x") && obj.items.size() == 2)
    return obj.items[a == "p" ? 0 : 1];
  throw UserError(e.loc, fmt::format("attribute '{}' of {} is not supported", a, describe(obj)));
}

Value Translator::subscript(const Expr& e) {
  Value obj = eval(e.items[0]);
  Value idx = eval(e.items[1]);
  std::vector<Value> items = idx.kind == K::Tuple && e.items[1]->kind == ExprKind::Tuple
                                 ? idx.items
                                 : std::vector<Value>{idx};
  if (obj.kind == K::Module && obj.s == "language.mgrid") {
    std::vector<Value> axes;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (items[i].kind != K::Slice)
        throw UserError(e.loc, "nl.mgrid takes slices, e.g. nl.mgrid[0:128, 0:512]");
      std::int64_t lo = items[i].items[0].kind == K::None
                            ? 0
                            : const_int(items[i].items[0], e.loc, "an mgrid bound");
      std::int64_t hi = const_int(items[i].items[1], e.loc, "an mgrid bound");
      Value v;
      v.kind = K::Index;
      v.idx =
          Index{Affine{lo, {}}, static_cast<int>(i), static_cast<int>(items.size()), hi - lo, 1};
      axes.push_back(v);
    }
    return Value::tuple(std::move(axes));
  }
  if (obj.kind == K::Index) {  // nl.arange(n)[:, None]: the position of the slice is the axis
    Value v = obj;
    int axis = -1, n = static_cast<int>(items.size());
    for (int i = 0; i < n; ++i) {
      if (items[static_cast<std::size_t>(i)].kind == K::Slice)
        axis = axis < 0 ? i : -2;
      else if (items[static_cast<std::size_t>(i)].kind != K::None)
        axis = -2;
    }
    if (axis < 0)
      throw UserError(e.loc, "index an nl.arange with one ':' and None elsewhere, e.g. [:, None]");
    v.idx.axis = axis, v.idx.ndim = n;
    return v;
  }
  if (obj.kind == K::Tuple) {
    std::int64_t i = const_int(idx, e.loc, "a tuple index");
    auto n = static_cast<std::int64_t>(obj.items.size());
    if (i < -n || i >= n)
      throw UserError(e.loc, fmt::format("tuple index {} out of range (size {})", i, n));
    return obj.items[static_cast<std::size_t>(i < 0 ? i + n : i)];
  }
  if (obj.kind == K::Array) {
    Value v;
    v.kind = K::View;
    v.array = obj.array;
    v.items = std::move(items);
    return v;
  }
  if (obj.kind == K::View)
    throw UserError(e.loc, "subscripting a subscripted array is not supported; index once");
  throw UserError(e.loc, fmt::format("cannot subscript {}", describe(obj)));
}

std::int64_t Translator::const_int(const Value& v, const SourceLoc& loc, const char* what) const {
  if (v.is_const_int()) return v.a.c;
  if (v.kind == K::Bool) return v.b ? 1 : 0;
  if (v.kind == K::Int)
    throw UserError(
        loc,
        fmt::format("{} must be known when the kernel is translated, not depend on a loop variable",
                    what));
  throw UserError(loc, fmt::format("{} must be an integer, not {}", what, describe(v)));
}

double Translator::number(const Value& v, const SourceLoc& loc, const char* what) const {
  if (v.is_number()) return v.number();
  throw UserError(
      loc, fmt::format("{} must be a number known when the kernel is translated, not {}", what,
                       describe(v)));
}

bool Translator::truth(const Value& v, const SourceLoc& loc) const {
  switch (v.kind) {
    case K::None:
      return false;
    case K::Bool:
      return v.b;
    case K::Float:
      return v.f != 0;
    case K::Int:
      if (!v.a.constant()) break;
      return v.a.c != 0;
    case K::Str:
      return !v.s.empty();
    case K::Tuple:
      return !v.items.empty();
    default:
      break;
  }
  throw UserError(loc, fmt::format("a condition on {} must be known when the kernel is translated",
                                   describe(v)));
}

}  // namespace ts::nki

// Python arithmetic at translation time: numbers, loop-dependent integers, index grids, masks,
// and element-wise arithmetic on tiles (as the nl.* functions).
#include <cmath>

#include "translator.h"

namespace ts::nki {

namespace {

using K = Value::Kind;

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

Value numeric(const std::string& op, const Value& l, const Value& r, const SourceLoc& loc) {
  bool ints = l.kind != K::Float && r.kind != K::Float;
  double x = l.number(), y = r.number();
  if (ints) {
    std::int64_t a = static_cast<std::int64_t>(x), b = static_cast<std::int64_t>(y);
    if (op == "+") return Value::integer(a + b);
    if (op == "-") return Value::integer(a - b);
    if (op == "*") return Value::integer(a * b);
    if ((op == "//" || op == "%") && b == 0) throw UserError(loc, "integer division by zero");
    if (op == "//") return Value::integer(floor_div(a, b));
    if (op == "%") return Value::integer(a - floor_div(a, b) * b);
    if (op == "**" && b >= 0)
      return Value::integer(static_cast<std::int64_t>(std::llround(std::pow(x, y))));
    if (op == "&") return Value::integer(a & b);
    if (op == "|") return Value::integer(a | b);
    if (op == "^") return Value::integer(a ^ b);
    if (op == "<<") return Value::integer(a << b);
    if (op == ">>") return Value::integer(a >> b);
  }
  if (op == "+") return Value::real(x + y);
  if (op == "-") return Value::real(x - y);
  if (op == "*") return Value::real(x * y);
  if (op == "/") return Value::real(x / y);
  if (op == "//") return Value::real(std::floor(x / y));
  if (op == "%") return Value::real(x - std::floor(x / y) * y);
  if (op == "**") return Value::real(std::pow(x, y));
  if (op == "<") return Value::boolean(x < y);
  if (op == "<=") return Value::boolean(x <= y);
  if (op == ">") return Value::boolean(x > y);
  if (op == ">=") return Value::boolean(x >= y);
  if (op == "==") return Value::boolean(x == y);
  if (op == "!=") return Value::boolean(x != y);
  throw UserError(loc, fmt::format("operator '{}' is not supported on numbers here", op));
}

}  // namespace

Value Translator::binary(const Expr& e) {
  const std::string& op = e.text;
  if (op == "and" || op == "or") {
    Value l = eval(e.items[0]);
    bool t = truth(l, e.items[0]->loc);
    if ((op == "and") != t) return l;
    return eval(e.items[1]);
  }
  Value l = eval(e.items[0]), r = eval(e.items[1]);
  if (l.tensor() || r.tensor()) {
    static const std::map<std::string, std::string> alu = {
        {"+", "add"}, {"-", "sub"}, {"*", "mul"}, {"/", "div"}};
    auto it = alu.find(op);
    if (it == alu.end())
      throw UserError(e.loc, fmt::format("operator '{}' on tiles is not supported", op));
    return elementwise(it->second, l, r, nullptr, std::nullopt, false, e.loc);
  }
  if (l.kind == K::Mask || r.kind == K::Mask) {
    if (op != "&" || l.kind != K::Mask || r.kind != K::Mask)
      throw UserError(e.loc, "masks combine with '&' only");
    Value m = l;
    m.mask.insert(m.mask.end(), r.mask.begin(), r.mask.end());
    return m;
  }
  if (l.kind == K::Index || r.kind == K::Index) {
    if (op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=")
      return compare(op, l, r, e.loc);
    return index_arith(op, l, r, e.loc);
  }
  if (l.kind == K::Tuple && r.kind == K::Tuple && op == "+") {
    Value t = l;
    t.items.insert(t.items.end(), r.items.begin(), r.items.end());
    return t;
  }
  if (l.kind == K::Int && r.kind == K::Int && (!l.a.constant() || !r.a.constant())) {
    if (op == "+") return Value::integer(l.a + r.a);
    if (op == "-") return Value::integer(l.a - r.a);
    if (op == "*" && (l.a.constant() || r.a.constant()))
      return Value::integer(l.a.constant() ? r.a * l.a.c : l.a * r.a.c);
    if (op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=")
      return compare(op, l, r, e.loc);
    throw UserError(
        e.loc,
        fmt::format("'{}' of a loop variable is not affine; tilesweep needs indices of the form "
                    "a * i + b in the loop variables",
                    op));
  }
  if ((l.kind == K::Int && !l.a.constant()) || (r.kind == K::Int && !r.a.constant()))
    throw UserError(e.loc, fmt::format("'{}' between a loop variable and {} is not supported", op,
                                       describe(l.kind == K::Int ? r : l)));
  if (l.kind == K::Str && r.kind == K::Str && (op == "==" || op == "!="))
    return Value::boolean((l.s == r.s) == (op == "=="));
  if (l.is_number() && r.is_number()) return numeric(op, l, r, e.loc);
  if (op == "==" || op == "!=") {
    bool same = l.kind == r.kind && ((l.kind == K::DType && l.dtype == r.dtype) ||
                                     l.kind == K::None || (l.kind == K::Module && l.s == r.s));
    return Value::boolean(same == (op == "=="));
  }
  throw UserError(e.loc, fmt::format("operator '{}' between {} and {} is not supported", op,
                                     describe(l), describe(r)));
}

Value Translator::unary(const Expr& e) {
  Value v = eval(e.items[0]);
  if (e.text == "not") return Value::boolean(!truth(v, e.loc));
  if (e.text == "+") return v;
  if (e.text == "-") {
    if (v.kind == K::Float) return Value::real(-v.f);
    if (v.kind == K::Int || v.kind == K::Bool)
      return Value::integer(v.kind == K::Bool ? Affine{v.b ? -1 : 0, {}} : v.a * -1);
    if (v.kind == K::Index) return index_arith("*", v, Value::integer(-1), e.loc);
    if (v.tensor())
      return elementwise("mul", v, Value::real(-1.0), nullptr, std::nullopt, false, e.loc);
  }
  if (e.text == "~" && v.is_const_int()) return Value::integer(~v.a.c);
  throw UserError(e.loc, fmt::format("unary '{}' of {} is not supported", e.text, describe(v)));
}

}  // namespace ts::nki

// Calls: the kernel file's own functions (inlined), Python builtins, math, and the dispatch to
// nl.* (language.cpp) and nisa.* (isa.cpp).
#include <cmath>

#include "translator.h"

namespace ts::nki {

namespace {
using K = Value::Kind;
}

Args Translator::bind_args(const Expr& call, const std::vector<std::string>& names,
                           bool dst_first) {
  std::vector<std::string> order = names;
  if (dst_first && new_api_) order.insert(order.begin(), "dst");
  Args out;
  std::size_t pos = 0;
  std::string fn =
      call.items[0]->kind == ExprKind::Attr ? call.items[0]->text : call.items[0]->text;
  for (const Arg& a : call.args) {
    if (a.name.empty()) {
      if (pos >= order.size())
        throw UserError(a.value->loc, fmt::format("{}() takes at most {} positional arguments here",
                                                  fn, order.size()));
      out[order[pos++]] = eval(a.value);
      continue;
    }
    if (a.name == "name") continue;  // an instruction's name, for the profiler
    if (std::find(order.begin(), order.end(), a.name) == order.end() &&
        !(a.name == "dst" && dst_first))
      throw UserError(a.value->loc,
                      fmt::format("{}() has no argument '{}' that tilesweep knows", fn, a.name));
    out[a.name] = eval(a.value);
  }
  return out;
}

Value Translator::call(const Expr& e, const Value* dst, bool accumulate) {
  Value callee = eval(e.items[0]);
  Value r;
  if (callee.kind == K::Func) {
    r = call_function(*functions_.at(callee.s), e);
  } else if (callee.kind == K::Module && callee.s.rfind("language.", 0) == 0) {
    return call_language(callee.s.substr(9), e, dst, accumulate);
  } else if (callee.kind == K::Module && callee.s.rfind("isa.", 0) == 0) {
    return call_isa(callee.s.substr(4), e, dst, accumulate);
  } else if (callee.kind == K::Module && callee.s == "method.broadcast_to") {
    Args a = bind_args(e, {"shape"}, false);
    r = broadcast_partitions(callee.items.at(0), a["shape"], e.loc);
  } else if (callee.kind == K::Module && callee.s.rfind("builtins.", 0) == 0) {
    r = builtin(callee.s.substr(9), e);
  } else if (callee.kind == K::Module && callee.s.rfind("math.", 0) == 0) {
    std::string fn = callee.s.substr(5);
    Args a = bind_args(e, {"x"}, false);
    double x = number(a["x"], e.loc, fn.c_str());
    if (fn == "ceil")
      r = Value::integer(static_cast<std::int64_t>(std::ceil(x)));
    else if (fn == "floor")
      r = Value::integer(static_cast<std::int64_t>(std::floor(x)));
    else if (fn == "sqrt")
      r = Value::real(std::sqrt(x));
    else
      throw UserError(e.loc, fmt::format("math.{} is not supported", fn));
  } else {
    throw UserError(e.loc, fmt::format("calling {} is not supported", describe(callee)));
  }
  if (dst) return copy_into(r, dst, std::nullopt, e.loc);
  return r;
}

Value Translator::make_range(const std::string& kind, const Args& a, const SourceLoc& loc) {
  std::int64_t start = 0, stop = 0, step = 1;
  bool has_stop = a.count("stop") && a.at("stop").kind != K::None;
  if (!has_stop) {
    stop = const_int(a.at("start"), loc, "a loop bound");
  } else {
    start = const_int(a.at("start"), loc, "a loop bound");
    stop = const_int(a.at("stop"), loc, "a loop bound");
    if (a.count("step") && a.at("step").kind != K::None)
      step = const_int(a.at("step"), loc, "a loop step");
  }
  if (step <= 0) throw UserError(loc, "loop steps must be positive");
  Value v;
  v.kind = K::Range;
  v.s = kind;
  v.a = Affine{start, {}};
  v.step = step;
  v.trips = stop > start ? (stop - start + step - 1) / step : 0;
  return v;
}

Value Translator::builtin(const std::string& name, const Expr& e) {
  if (name == "range")
    return make_range("range", bind_args(e, {"start", "stop", "step"}, false), e.loc);
  if (name == "print") return Value::none();
  Args a = bind_args(e, {"x", "y"}, false);
  const Value& x = a["x"];
  if (name == "len") {
    if (x.kind == K::Tuple) return Value::integer(static_cast<std::int64_t>(x.items.size()));
    if (x.kind == K::Array) return Value::integer(arrays_[x.array].shape.at(0));
  }
  if ((name == "tuple" || name == "list") && x.kind == K::Tuple) return x;
  if ((name == "min" || name == "max") && a.count("y")) {
    double p = number(x, e.loc, "min/max"), q = number(a["y"], e.loc, "min/max");
    const Value& pick = (name == "min") == (p <= q) ? x : a["y"];
    return pick;
  }
  if ((name == "min" || name == "max") && x.kind == K::Tuple && !x.items.empty()) {
    Value best = x.items[0];
    for (const Value& v : x.items)
      if ((name == "min") == (number(v, e.loc, "min/max") < number(best, e.loc, "min/max")))
        best = v;
    return best;
  }
  if (name == "int") return Value::integer(static_cast<std::int64_t>(number(x, e.loc, "int()")));
  if (name == "float") return Value::real(number(x, e.loc, "float()"));
  if (name == "bool") return Value::boolean(truth(x, e.loc));
  if (name == "abs") {
    double v = number(x, e.loc, "abs()");
    return x.kind == K::Float ? Value::real(std::fabs(v))
                              : Value::integer(static_cast<std::int64_t>(std::fabs(v)));
  }
  if (name == "round")
    return Value::integer(static_cast<std::int64_t>(std::llround(number(x, e.loc, "round()"))));
  throw UserError(e.loc, fmt::format("{}() of {} is not supported", name, describe(x)));
}

std::optional<ir::DType> Translator::dtype_arg(const Args& a, const char* key,
                                               const SourceLoc& loc) const {
  auto it = a.find(key);
  if (it == a.end() || it->second.kind == K::None) return std::nullopt;
  if (it->second.kind == K::DType) return it->second.dtype;
  if (it->second.kind == K::Module)
    throw UserError(
        loc, fmt::format("dtype {} is not supported: tilesweep models float types", it->second.s));
  throw UserError(loc, fmt::format("{}= takes a dtype, not {}", key, describe(it->second)));
}

std::string Translator::alu_name(const Value& v, const SourceLoc& loc) const {
  static const std::map<std::string, std::string> kAlu = {
      {"add", "add"},         {"subtract", "sub"},    {"multiply", "mul"}, {"divide", "div"},
      {"maximum", "maximum"}, {"minimum", "minimum"}, {"max", "max"},      {"min", "min"}};
  if (v.kind == K::Module && v.s.rfind("language.", 0) == 0) {
    auto it = kAlu.find(v.s.substr(9));
    if (it != kAlu.end()) return it->second;
  }
  if (v.kind == K::Module && v.s.rfind("numpy.", 0) == 0) {
    auto it = kAlu.find(v.s.substr(6));
    if (it != kAlu.end()) return it->second;
  }
  throw UserError(
      loc,
      fmt::format("{} is not an ALU operator tilesweep models (nl.add, nl.subtract, nl.multiply, "
                  "nl.divide, nl.maximum, nl.minimum, nl.max, nl.min)",
                  describe(v)));
}

std::string Translator::func_name(const Value& v, const SourceLoc& loc) const {
  static const std::map<std::string, std::string> kFuncs = {{"copy", "copy"},
                                                            {"identity", "copy"},
                                                            {"exp", "exp"},
                                                            {"sigmoid", "sigmoid"},
                                                            {"silu", "silu"},
                                                            {"relu", "relu"},
                                                            {"gelu", "gelu"},
                                                            {"tanh", "tanh"},
                                                            {"sqrt", "sqrt"},
                                                            {"rsqrt", "rsqrt"},
                                                            {"reciprocal", "reciprocal"},
                                                            {"square", "square"},
                                                            {"log", "log"},
                                                            {"abs", "abs"},
                                                            {"sin", "sin"}};
  std::string n = v.kind == K::Module ? v.s.substr(v.s.find('.') + 1) : "";
  auto it = kFuncs.find(n);
  if (v.kind == K::Module && it != kFuncs.end()) return it->second;
  throw UserError(loc,
                  fmt::format("{} is not an activation function tilesweep models", describe(v)));
}

}  // namespace ts::nki

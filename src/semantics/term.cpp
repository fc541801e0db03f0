#include "tilesweep/semantics/term.h"

#include <fmt/format.h>

namespace ts::sem {

namespace {
struct FuncInfo {
  const char* name;
  Func func;
  int arity;
};
constexpr FuncInfo kFuncs[] = {
    {"exp", Func::Exp, 1},   {"log", Func::Log, 1},         {"sqrt", Func::Sqrt, 1},
    {"tanh", Func::Tanh, 1}, {"abs", Func::Abs, 1},         {"sin", Func::Sin, 1},
    {"cos", Func::Cos, 1},   {"maximum", Func::Maximum, 2}, {"minimum", Func::Minimum, 2},
};
}  // namespace

const char* func_name(Func f) {
  for (const auto& i : kFuncs)
    if (i.func == f) return i.name;
  return "?";
}

bool func_from_name(std::string_view name, Func& out, int& arity) {
  for (const auto& i : kFuncs) {
    if (name == i.name) {
      out = i.func;
      arity = i.arity;
      return true;
    }
  }
  return false;
}

std::string TermGraph::str(int id) const {
  const TermNode& n = nodes[id];
  auto arg = [&](int i) { return str(n.args[i]); };
  auto var = [&](int v) {
    return v < static_cast<int>(var_names.size()) ? var_names[v] : fmt::format("v{}", v);
  };
  switch (n.op) {
    case TermOp::Const:
      return fmt::format("{}", n.value);
    case TermOp::Index:
      return var(n.var);
    case TermOp::Size:
      return "size(" + n.size.str() + ")";
    case TermOp::Neg:
      return "-" + arg(0);
    case TermOp::Add:
      return "(" + arg(0) + " + " + arg(1) + ")";
    case TermOp::Sub:
      return "(" + arg(0) + " - " + arg(1) + ")";
    case TermOp::Mul:
      return "(" + arg(0) + " * " + arg(1) + ")";
    case TermOp::Div:
      return "(" + arg(0) + " / " + arg(1) + ")";
    case TermOp::FloorDiv:
      return "(" + arg(0) + " // " + arg(1) + ")";
    case TermOp::Mod:
      return "(" + arg(0) + " % " + arg(1) + ")";
    case TermOp::Lt:
      return "(" + arg(0) + " < " + arg(1) + ")";
    case TermOp::Le:
      return "(" + arg(0) + " <= " + arg(1) + ")";
    case TermOp::Gt:
      return "(" + arg(0) + " > " + arg(1) + ")";
    case TermOp::Ge:
      return "(" + arg(0) + " >= " + arg(1) + ")";
    case TermOp::Eq:
      return "(" + arg(0) + " == " + arg(1) + ")";
    case TermOp::Ne:
      return "(" + arg(0) + " != " + arg(1) + ")";
    case TermOp::Select:
      return "select(" + arg(0) + ", " + arg(1) + ", " + arg(2) + ")";
    case TermOp::Call: {
      std::string s = std::string(func_name(n.func)) + "(";
      for (std::size_t i = 0; i < n.args.size(); ++i)
        s += (i ? ", " : "") + arg(static_cast<int>(i));
      return s + ")";
    }
    case TermOp::Reduce: {
      static const char* names[] = {"sum", "prod", "max", "min"};
      return fmt::format("{}({} < {}, {})", names[static_cast<int>(n.reducer)], var(n.var), arg(0),
                         arg(1));
    }
    case TermOp::Load: {
      std::string s = fmt::format("in{}[", n.operand);
      for (std::size_t i = 0; i < n.args.size(); ++i)
        s += (i ? ", " : "") + arg(static_cast<int>(i));
      return s + "]";
    }
  }
  return "?";
}

}  // namespace ts::sem

// The syntax tree of an NKI kernel file: the Python subset the parser accepts. Every node keeps
// the file:line:col where it starts, so the translator can name what it does not support.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tilesweep/base/error.h"

namespace ts::nki {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

enum class ExprKind {
  Name,
  Int,
  Float,
  Str,
  True,
  False,
  None,
  Ellipsis,
  Attr,       // items[0].text
  Call,       // items[0](args)
  Subscript,  // items[0][items[1]]
  Slice,      // items = {start, stop, step}, each possibly null
  Tuple,
  List,
  Binary,  // items[0] text items[1]: + - * / // % ** & | ^ < <= > >= == !=, and, or
  Unary,   // text items[0]: - + ~ not
  IfElse,  // items = {value_if_true, condition, value_if_false}
};

struct Arg {
  std::string name;  // empty for a positional argument
  ExprPtr value;
};

struct Expr {
  ExprKind kind = ExprKind::None;
  SourceLoc loc;
  std::string text;  // a name, an attribute, an operator, a number's spelling, a string
  std::vector<ExprPtr> items;
  std::vector<Arg> args;  // Call
};

struct Stmt;
using Block = std::vector<Stmt>;

enum class StmtKind { Expr, Assign, AugAssign, For, If, Return, Assert, Pass, Import, Def };

struct Param {
  std::string name;
  ExprPtr default_value;  // null when none
  SourceLoc loc;
};

struct Stmt {
  StmtKind kind = StmtKind::Pass;
  SourceLoc loc;
  std::vector<ExprPtr> targets;  // Assign (chained targets), AugAssign / For: one
  ExprPtr
      value;  // Expr, Assign, AugAssign, Return, Assert (condition), If (condition), For (iterable)
  std::string op;      // AugAssign: "+=", ...
  Block body, orelse;  // For, If (elif is an If alone in orelse), Def
  // Def: the function's name, parameters and decorators. Import: `name` the module path,
  // `alias` the name bound (for `from M import X as Y`: name = "M.X").
  std::string name, alias;
  std::vector<Param> params;
  std::vector<ExprPtr> decorators;
};

struct Module {
  std::string file;
  Block body;
};

}  // namespace ts::nki

// Syntax tree of a kernel file, as parsed (before names, ops and shapes are resolved).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tilesweep/base/error.h"

namespace ts::ir {

struct AstExpr;
using AstPtr = std::shared_ptr<const AstExpr>;

struct AstSlice {
  bool is_slice = false;  // `lo:hi:step` (any part may be missing) vs a plain index
  AstPtr index, lo, hi, step;
};

struct AstKeyword {
  std::string name;
  AstPtr value;
  SourceLoc loc;
};

struct AstExpr {
  enum Kind {
    Name,
    Int,
    Float,
    String,
    Unary,
    Binary,
    Call,
    Attribute,
    Subscript,
    Tuple
  } kind = Name;
  SourceLoc loc;
  std::string name;  // Name; Attribute (member); Unary/Binary operator text
  long long int_value = 0;
  double float_value = 0;
  std::vector<AstPtr> args;  // Unary/Binary operands; Call callee + positional; Tuple items;
                             // Attribute/Subscript base
  std::vector<AstKeyword> keywords;
  std::vector<AstSlice> slices;
  int height = 1;  // levels in this expression's tree: 1 for a leaf, `a + b + c` is 3
};

struct AstParam {
  std::string name;
  AstPtr annotation;  // null when not annotated
  AstPtr default_value;
  SourceLoc loc;
};

struct AstStmt {
  enum Kind { Assign, Return, Expr } kind = Expr;
  std::vector<std::string> targets;  // Assign: one name, or several for tuple unpacking
  AstPtr value;
  SourceLoc loc;
};

struct AstFunction {
  std::string name;
  std::vector<AstParam> params;
  AstPtr returns;  // null when not annotated
  std::vector<AstStmt> body;
  SourceLoc loc;
};

struct AstModule {
  std::string file;
  std::vector<AstFunction> functions;
};

// Expressions deeper than this (nested, or long operator chains like a 600-term sum) are a
// UserError, so that no later pass over the tree can recurse past the stack.
constexpr int kMaxExpressionHeight = 500;

// Parses a kernel file. Throws UserError `file:line:col: error: ...` on a syntax error.
AstModule parse_syntax(const std::string& text, const std::string& file);

}  // namespace ts::ir

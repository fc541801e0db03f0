// The element-expression language: one small language for the semantics of kernel ops
// (ops.toml) and of ISA instructions (isa.toml). An op is described by a shape pattern per
// operand, an output pattern, and an element expression giving one output element in terms of
// operand elements, e.g. matmul:
//
//   a = "[*B, m, k]"   b = "[*B, k, n]"   out = "[*B, m, n]"   expr = "sum(k, a * b)"
//
// Patterns: `*G` a group of zero or more dims; `m` one dim; `r@axis` one dim whose position is
// the `axis` attribute; `c : p + q` an output dim with index `c` and size `p + q`; `1` a literal;
// `*G%axes` the group permuted by an attribute; `*G{e}` the group with each element mapped by e;
// `*G=shape` a group whose sizes come from a list attribute; `item?flag` present only when the
// bool attribute `flag` is true. Expressions: numbers, `+ - * / // %`, comparisons,
// `select(c, a, b)`, primitives (exp log sqrt tanh abs sin cos maximum minimum), reductions
// `sum|prod|max|min(k, e)` over a dim or `(j < n, e)` / `(j <= n, e)` over a range, `size(k)`,
// tensor accesses `x[i, *G, j + 1]` (`x` alone is x indexed by its own pattern) and `x[*S~T]`
// (x indexed by the row-major position of group T: reshape).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tilesweep/base/error.h"

namespace ts::sem {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

enum class BinOp { Add, Sub, Mul, Div, FloorDiv, Mod, Lt, Le, Gt, Ge, Eq, Ne };
enum class Reducer { Sum, Prod, Max, Min };

// One item of a pattern or of a tensor access.
struct Item {
  bool group = false;
  std::string name;          // a dim/index name (scalar), or the group name
  ExprPtr expr;              // scalar item: its size (pattern) or index (access) expression
  std::string position;      // `r@axis`: the attribute giving the item's position
  std::string permute;       // `*G%axes`
  ExprPtr each;              // `*G{e}`
  std::string from_attr;     // `*G=shape`
  std::string reshape_from;  // `*S~T` in an access
  std::string flag;          // `item?flag`
};

struct Expr {
  enum Kind { Number, Name, Neg, Binary, Call, Reduce, Access } kind = Number;
  double number = 0;
  std::string name;  // Name, Call (function), Access (tensor), Reduce (bound variable)
  BinOp op = BinOp::Add;
  Reducer reducer = Reducer::Sum;
  bool inclusive = false;  // Reduce over `j <= bound`
  ExprPtr bound;           // Reduce over a range; null when over a dim
  std::vector<ExprPtr> args;
  std::vector<Item> items;  // Access
  bool bare = false;        // Access written as a bare operand name
  int col = 0;              // 1-based column in the source string
};

struct Pattern {
  std::vector<Item> items;
};

// Parsers; errors are UserErrors at `where` (its column is offset by the error's column).
ExprPtr parse_expr(std::string_view text, const SourceLoc& where);
Pattern parse_pattern(std::string_view text, const SourceLoc& where);
// A requirement: a comparison, or `*G{comparison}` (one per element of G).
Item parse_requirement(std::string_view text, const SourceLoc& where);

std::string to_string(const Expr& e);
std::string to_string(const Item& item);
std::string to_string(BinOp op);

}  // namespace ts::sem

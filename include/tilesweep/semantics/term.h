// An op's element expression instantiated for concrete operand ranks: a flat DAG of terms over
// integer index variables (0..rank-1 are the output's indices, the rest reduction variables),
// symbolic sizes, operand loads and real arithmetic. The interpreter evaluates it; the Z3 encoder
// translates it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tilesweep/semantics/dim.h"
#include "tilesweep/semantics/expr.h"

namespace ts::sem {

enum class TermOp : std::uint8_t {
  Const,
  Index,
  Size,
  Neg,
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  Mod,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  Select,  // args: condition, then, else
  Call,    // a primitive function
  Reduce,  // var ranges over [0, args[0]); args[1] is the body
  Load,    // operand element; args are the indices
};

// Primitive real functions of the element-expression language.
enum class Func : std::uint8_t { Exp, Log, Sqrt, Tanh, Abs, Sin, Cos, Maximum, Minimum };

struct TermNode {
  TermOp op = TermOp::Const;
  Func func = Func::Exp;
  Reducer reducer = Reducer::Sum;
  bool integer = false;  // an index-valued (not real-valued) term
  double value = 0;      // Const
  int var = -1;          // Index, Reduce
  int operand = -1;      // Load
  Dim size;              // Size
  std::vector<int> args;
};

struct TermGraph {
  std::vector<TermNode> nodes;  // children before parents
  int root = -1;
  int rank = 0;  // output index variables are 0..rank-1
  std::vector<std::string> var_names;

  int add(TermNode n) {
    nodes.push_back(std::move(n));
    return static_cast<int>(nodes.size()) - 1;
  }
  std::string str(int id) const;
  std::string str() const { return str(root); }
};

const char* func_name(Func f);
// Looks up a primitive by name; false when there is none.
bool func_from_name(std::string_view name, Func& out, int& arity);

}  // namespace ts::sem

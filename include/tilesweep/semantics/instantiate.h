// Instantiating an op's spec for concrete operand shapes: matches the operand patterns (binding
// dims and groups, broadcasting), normalizes the attributes, computes the output shape, collects
// the shape preconditions that only concrete dims can decide, and builds the element expression
// as a TermGraph. This is the one place shapes are inferred from the op description.
#pragma once

#include <string>
#include <vector>

#include "tilesweep/semantics/op_spec.h"
#include "tilesweep/semantics/term.h"

namespace ts::sem {

// `lhs cmp rhs` must hold for the concrete dims (e.g. `N - N // 2 == N // 2`: N even).
struct Precondition {
  Dim lhs;
  BinOp cmp = BinOp::Eq;
  Dim rhs;
  std::string what;  // the op and the rule, for the message when it fails
  SourceLoc loc;     // the op that implies it (unknown for some, e.g. a declared return shape)

  std::string str() const { return lhs.str() + " " + to_string(cmp) + " " + rhs.str(); }
  // nullopt when a dim is unbound.
  std::optional<bool> holds(const DimEnv& env) const;
  // What the dims make of both sides, for the message when it fails: "C = 96 and D * H = 128".
  std::string values(const DimEnv& env) const;
};

struct OpInstance {
  std::vector<Dim> shape;
  AttrMap attrs;  // every attribute, defaults filled in, axes normalized to be non-negative
  std::vector<Precondition> preconditions;
  TermGraph body;
};

// Throws UserError at `loc` when the operands do not fit the op (naming the shapes) or an
// attribute is missing, of the wrong type or out of range. `table` resolves the ops that
// `apply(attr, ...)` names (default: the built-in ops).
OpInstance instantiate(const OpSpec& op, const std::vector<std::vector<Dim>>& operand_shapes,
                       const AttrMap& attrs, const SourceLoc& loc, const OpTable* table = nullptr);

}  // namespace ts::sem

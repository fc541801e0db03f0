// Parses NKI kernel source (a Python subset) into the syntax tree of ast.h.
#pragma once

#include <string>
#include <string_view>

#include "tilesweep/nki_import/ast.h"

namespace ts::nki {

// Statements: def (with decorators and parameter defaults; annotations are skipped), for, if /
// elif / else, return, assert, pass, import / from-import, assignments (also tuple targets and
// augmented ones) and expression statements. Expressions: Python's precedence from the
// conditional expression down to calls, subscripts (slices, tuples, None) and attributes.
// Anything else (while, with, class, lambda, comprehensions, ...) is a UserError at its
// file:line:col naming the construct. Nesting deeper than kMaxNesting is refused the same way,
// so no input drives the recursion past the stack.
constexpr int kMaxNesting = 200;
Module parse_module(std::string_view source, const std::string& file);

}  // namespace ts::nki

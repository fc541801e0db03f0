// Tokens of the kernel language (a Python subset): names, numbers, strings, operators, and the
// NEWLINE / INDENT / DEDENT structure of Python's layout rule.
#pragma once

#include <string>
#include <vector>

#include "tilesweep/base/error.h"

namespace ts::ir {

struct Token {
  enum Kind { Name, Int, Float, String, Op, Newline, Indent, Dedent, End } kind = End;
  std::string text;
  SourceLoc loc;
};

// Splits `text` into tokens. Throws UserError for a character or indentation the language
// does not allow (tabs mixed with spaces, a dedent to an unknown level, an unclosed bracket
// or string).
std::vector<Token> tokenize(const std::string& text, const std::string& file);

}  // namespace ts::ir

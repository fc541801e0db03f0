// The tokens of NKI kernel source: the subset of Python that NKI kernels are written in (names,
// numbers, strings, operators, indentation), each with its file:line:col.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tilesweep/base/error.h"

namespace ts::nki {

enum class Tok { Name, Int, Float, Str, Op, Newline, Indent, Dedent, End };

struct Token {
  Tok kind = Tok::End;
  std::string text;  // a name, an operator, a number's spelling or a string's contents
  SourceLoc loc;
};

// Splits `source` into tokens: comments dropped, lines joined inside brackets and after a
// backslash, INDENT / DEDENT around indented blocks (Python's rules; tabs count to the next
// multiple of 8). UserError at file:line:col for an unterminated string, an inconsistent dedent
// or a character Python does not allow.
std::vector<Token> tokenize(std::string_view source, const std::string& file);

}  // namespace ts::nki

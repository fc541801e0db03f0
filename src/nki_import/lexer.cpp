#include "tilesweep/nki_import/lexer.h"

#include <cctype>

namespace ts::nki {

namespace {

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Operators, longest first so that "**" wins over "*".
constexpr std::string_view kOps[] = {
    "**=", "//=", "->", "**", "//", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "<<",
    ">>",  "&=",  "|=", "(",  ")",  "[",  "]",  "{",  "}",  ",",  ":",  ".",  ";",  "@",
    "=",   "+",   "-",  "*",  "/",  "%",  "<",  ">",  "&",  "|",  "^",  "~"};

class Lexer {
 public:
  Lexer(std::string_view s, const std::string& file) : s_(s), file_(file) {}

  std::vector<Token> run() {
    while (pos_ < s_.size()) {
      if (at_line_start_) {
        if (!indentation()) continue;
      }
      char c = s_[pos_];
      if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else if (c == '\n') {
        newline();
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
        advance(1);
      } else if (c == '\\' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '\n') {
        advance(1);
        pos_++, line_++, col_ = 1;
      } else if (name_start(c)) {
        name();
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && pos_ + 1 < s_.size() &&
                  std::isdigit(static_cast<unsigned char>(s_[pos_ + 1])))) {
        number();
      } else if (c == '"' || c == '\'') {
        string();
      } else {
        op();
      }
    }
    if (!out_.empty() && out_.back().kind != Tok::Newline) push(Tok::Newline, "", here());
    while (indents_.size() > 1) indents_.pop_back(), push(Tok::Dedent, "", here());
    push(Tok::End, "", here());
    return std::move(out_);
  }

 private:
  SourceLoc here() const { return SourceLoc{file_, line_, col_}; }
  void push(Tok k, std::string text, SourceLoc loc) {
    out_.push_back(Token{k, std::move(text), std::move(loc)});
  }
  void advance(std::size_t n) { pos_ += n, col_ += static_cast<int>(n); }

  void newline() {
    if (depth_ == 0 && !out_.empty() && out_.back().kind != Tok::Newline &&
        out_.back().kind != Tok::Indent && out_.back().kind != Tok::Dedent)
      push(Tok::Newline, "", here());
    ++pos_, ++line_, col_ = 1;
    at_line_start_ = depth_ == 0;
  }

  // Measures the indentation of a logical line; false when the line is blank or a comment.
  bool indentation() {
    int width = 0;
    std::size_t p = pos_;
    for (; p < s_.size() && (s_[p] == ' ' || s_[p] == '\t' || s_[p] == '\r' || s_[p] == '\f'); ++p)
      width = s_[p] == '\t' ? (width / 8 + 1) * 8 : width + 1;
    col_ += static_cast<int>(p - pos_);
    pos_ = p;
    if (p >= s_.size() || s_[p] == '\n' || s_[p] == '#') {
      while (pos_ < s_.size() && s_[pos_] != '\n') advance(1);
      if (pos_ < s_.size()) ++pos_, ++line_, col_ = 1;
      return false;
    }
    at_line_start_ = false;
    if (width > indents_.back()) {
      indents_.push_back(width);
      push(Tok::Indent, "", here());
    }
    while (width < indents_.back()) {
      indents_.pop_back();
      if (width > indents_.back())
        throw UserError(here(), "this line's indentation matches no enclosing block");
      push(Tok::Dedent, "", here());
    }
    return true;
  }

  void name() {
    SourceLoc loc = here();
    std::size_t b = pos_;
    while (pos_ < s_.size() && name_char(s_[pos_])) advance(1);
    // String prefixes (r"..", f"..") are plain strings here.
    if (pos_ < s_.size() && (s_[pos_] == '"' || s_[pos_] == '\'') && pos_ - b <= 2) return string();
    push(Tok::Name, std::string(s_.substr(b, pos_ - b)), loc);
  }

  void number() {
    SourceLoc loc = here();
    std::size_t b = pos_;
    bool is_float = false;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
        bool exp =
            (c == 'e' || c == 'E') && !(pos_ > b + 1 && (s_[b + 1] == 'x' || s_[b + 1] == 'X'));
        is_float = is_float || exp;
        advance(1);
        if (exp && pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) advance(1);
      } else if (c == '.') {
        is_float = true;
        advance(1);
      } else {
        break;
      }
    }
    std::string text;
    for (char c : s_.substr(b, pos_ - b))
      if (c != '_') text += c;
    push(is_float ? Tok::Float : Tok::Int, text, loc);
  }

  void string() {
    SourceLoc loc = here();
    char q = s_[pos_];
    bool triple = s_.substr(pos_, 3) == std::string(3, q);
    advance(triple ? 3 : 1);
    std::string text;
    while (true) {
      if (pos_ >= s_.size() || (!triple && s_[pos_] == '\n'))
        throw UserError(loc, "this string is never closed");
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) {
        text += s_[pos_ + 1];
        advance(2);
        continue;
      }
      if (triple ? s_.substr(pos_, 3) == std::string(3, q) : s_[pos_] == q) break;
      if (s_[pos_] == '\n')
        ++pos_, ++line_, col_ = 1;
      else
        text += s_[pos_], advance(1);
    }
    advance(triple ? 3 : 1);
    push(Tok::Str, text, loc);
  }

  void op() {
    SourceLoc loc = here();
    for (std::string_view o : kOps) {
      if (s_.substr(pos_, o.size()) != o) continue;
      if (o == "(" || o == "[" || o == "{") ++depth_;
      if ((o == ")" || o == "]" || o == "}") && depth_ > 0) --depth_;
      advance(o.size());
      push(Tok::Op, std::string(o), loc);
      return;
    }
    throw UserError(loc, fmt::format("unexpected character '{}'", s_[pos_]));
  }

  std::string_view s_;
  std::string file_;
  std::size_t pos_ = 0;
  int line_ = 1, col_ = 1, depth_ = 0;
  bool at_line_start_ = true;
  std::vector<int> indents_{0};
  std::vector<Token> out_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const std::string& file) {
  return Lexer(source, file).run();
}

}  // namespace ts::nki

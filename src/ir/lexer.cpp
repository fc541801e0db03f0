#include "tilesweep/ir/lexer.h"

#include <cctype>

namespace ts::ir {

namespace {

constexpr int kMaxBracketDepth = 256;

class Lexer {
 public:
  Lexer(const std::string& text, const std::string& file) : s_(text), file_(file) {}

  std::vector<Token> run() {
    indents_.push_back(0);
    bool line_start = true;
    while (i_ < s_.size()) {
      if (line_start && brackets_.empty()) {
        line_start = false;
        if (handle_indent()) continue;
      }
      char c = s_[i_];
      if (c == '\n') {
        if (brackets_.empty() && !out_.empty() && out_.back().kind != Token::Newline &&
            out_.back().kind != Token::Indent && out_.back().kind != Token::Dedent)
          push(Token::Newline, "\n", loc());
        advance();
        line_start = true;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
        advance();
        continue;
      }
      if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') advance();
        continue;
      }
      if (c == '\\' && i_ + 1 < s_.size() && s_[i_ + 1] == '\n') {
        advance();
        advance();
        continue;
      }
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        name();
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && i_ + 1 < s_.size() &&
           std::isdigit(static_cast<unsigned char>(s_[i_ + 1])))) {
        number();
        continue;
      }
      if (c == '"' || c == '\'') {
        string();
        continue;
      }
      op();
    }
    if (!brackets_.empty())
      fail(brackets_.back().loc, "'{}' is never closed", brackets_.back().text);
    if (!out_.empty() && out_.back().kind != Token::Newline && out_.back().kind != Token::Dedent)
      push(Token::Newline, "\n", loc());
    while (indents_.size() > 1) {
      indents_.pop_back();
      push(Token::Dedent, "", loc());
    }
    push(Token::End, "", loc());
    return std::move(out_);
  }

 private:
  SourceLoc loc() const { return SourceLoc{file_, line_, col_}; }
  void advance() {
    if (s_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++i_;
  }
  void push(Token::Kind k, std::string text, SourceLoc l) {
    out_.push_back({k, std::move(text), std::move(l)});
  }

  // At the start of a logical line: measures indentation; returns true if the line is blank.
  bool handle_indent() {
    int width = 0;
    bool tab = false, space = false;
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) {
      (s_[i_] == '\t' ? tab : space) = true;
      width += s_[i_] == '\t' ? 8 - width % 8 : 1;
      advance();
    }
    if (i_ >= s_.size() || s_[i_] == '\n' || s_[i_] == '#' || s_[i_] == '\r') return true;
    if (tab && space) fail(loc(), "indentation mixes tabs and spaces; use spaces only");
    if (width > indents_.back()) {
      indents_.push_back(width);
      push(Token::Indent, "", loc());
    } else {
      while (width < indents_.back()) {
        indents_.pop_back();
        push(Token::Dedent, "", loc());
      }
      if (width != indents_.back())
        fail(loc(), "unindent does not match any outer indentation level");
    }
    return false;
  }

  void name() {
    SourceLoc l = loc();
    std::size_t b = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
      advance();
    push(Token::Name, s_.substr(b, i_ - b), l);
  }

  void number() {
    SourceLoc l = loc();
    std::size_t b = i_;
    bool is_float = false;
    auto digits = [&] {
      while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
        advance();
    };
    digits();
    if (i_ < s_.size() && s_[i_] == '.') {
      is_float = true;
      advance();
      digits();
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      is_float = true;
      advance();
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) advance();
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_])))
        fail(l, "malformed number '{}'", s_.substr(b, i_ - b));
      digits();
    }
    if (i_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
      fail(l, "malformed number '{}'", s_.substr(b, i_ - b + 1));
    std::string text;
    for (std::size_t k = b; k < i_; ++k)
      if (s_[k] != '_') text += s_[k];
    push(is_float ? Token::Float : Token::Int, text, l);
  }

  void string() {
    SourceLoc l = loc();
    char q = s_[i_];
    bool triple = s_.compare(i_, 3, std::string(3, q)) == 0;
    std::size_t n = triple ? 3 : 1;
    for (std::size_t k = 0; k < n; ++k) advance();
    std::string value;
    while (true) {
      if (i_ >= s_.size()) fail(l, "string literal is never closed");
      if (!triple && s_[i_] == '\n') fail(l, "string literal is never closed on its line");
      if (s_.compare(i_, n, std::string(n, q)) == 0) break;
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) {
        value += s_[i_];
        advance();
      }
      value += s_[i_];
      advance();
    }
    for (std::size_t k = 0; k < n; ++k) advance();
    push(Token::String, value, l);
  }

  void op() {
    SourceLoc l = loc();
    static const char* ops[] = {
        "->", "//", "**", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "(", ")", "[", "]",
        ",",  ":",  ".",  "=",  "+",  "-",  "*",  "/",  "%",  "@",  "<",  ">", "{", "}", ";"};
    for (const char* o : ops) {
      std::string t(o);
      if (s_.compare(i_, t.size(), t) != 0) continue;
      for (std::size_t k = 0; k < t.size(); ++k) advance();
      if (t == "(" || t == "[" || t == "{") {
        if (brackets_.size() >= kMaxBracketDepth)
          fail(l, "brackets nested more than {} deep", kMaxBracketDepth);
        brackets_.push_back({Token::Op, t, l});
      } else if (t == ")" || t == "]" || t == "}") {
        static const std::string pairs = "()[]{}";
        char open = pairs[pairs.find(t[0]) - 1];
        if (brackets_.empty()) fail(l, "unmatched '{}'", t);
        if (brackets_.back().text[0] != open)
          fail(l, "'{}' does not match '{}' at {}", t, brackets_.back().text,
               format_loc(brackets_.back().loc));
        brackets_.pop_back();
      }
      push(Token::Op, t, l);
      return;
    }
    unsigned char c = static_cast<unsigned char>(s_[i_]);
    if (c >= 0x80)
      fail(l,
           "non-ASCII character in kernel source (only ASCII is allowed outside comments and "
           "strings)");
    fail(l, "unexpected character '{}'", static_cast<char>(c));
  }

  const std::string& s_;
  std::string file_;
  std::size_t i_ = 0;
  int line_ = 1, col_ = 1;
  std::vector<int> indents_;
  std::vector<Token> brackets_;
  std::vector<Token> out_;
};

}  // namespace

std::vector<Token> tokenize(const std::string& text, const std::string& file) {
  return Lexer(text, file).run();
}

}  // namespace ts::ir

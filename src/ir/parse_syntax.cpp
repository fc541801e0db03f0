// Recursive-descent parser from tokens to the syntax tree.
#include <algorithm>
#include <set>

#include "tilesweep/ir/ast.h"
#include "tilesweep/ir/lexer.h"

namespace ts::ir {

namespace {

constexpr int kMaxNesting = 200;

const std::set<std::string>& unsupported_keywords() {
  static const std::set<std::string> k = {
      "if",    "elif",     "else",     "for", "while",  "import",  "from",
      "class", "lambda",   "with",     "try", "except", "finally", "raise",
      "yield", "global",   "nonlocal", "del", "assert", "async",   "await",
      "break", "continue", "and",      "or",  "not",    "is",      "in"};
  return k;
}

class SyntaxParser {
 public:
  SyntaxParser(std::vector<Token> tokens, std::string file)
      : t_(std::move(tokens)), file_(std::move(file)) {}

  AstModule module() {
    AstModule m;
    m.file = file_;
    while (!at(Token::End)) {
      if (at(Token::Newline)) {
        next();
        continue;
      }
      if (at_name("def")) {
        m.functions.push_back(function());
        continue;
      }
      if (at(Token::String)) {
        next();
        expect_newline();
        continue;
      }  // module docstring
      if (at(Token::Indent)) fail(peek().loc, "unexpected indent");
      if (at(Token::Name) && unsupported_keywords().count(peek().text))
        fail(peek().loc, "'{}' is not supported in the kernel language (a file holds only `def`s)",
             peek().text);
      fail(peek().loc, "only function definitions (`def name(...):`) are allowed at the top level");
    }
    return m;
  }

 private:
  const Token& peek(int k = 0) const { return t_[std::min(pos_ + k, t_.size() - 1)]; }
  bool at(Token::Kind k) const { return peek().kind == k; }
  bool at_op(const char* op) const { return peek().kind == Token::Op && peek().text == op; }
  bool at_name(const char* n) const { return peek().kind == Token::Name && peek().text == n; }
  const Token& next() { return t_[pos_ < t_.size() - 1 ? pos_++ : pos_]; }
  bool eat_op(const char* op) {
    if (!at_op(op)) return false;
    next();
    return true;
  }
  std::string describe(const Token& t) const {
    switch (t.kind) {
      case Token::Newline:
        return "end of line";
      case Token::Indent:
        return "indent";
      case Token::Dedent:
        return "dedent";
      case Token::End:
        return "end of file";
      default:
        return "'" + t.text + "'";
    }
  }
  void expect_op(const char* op, const char* context) {
    if (!eat_op(op)) fail(peek().loc, "expected '{}' {}, found {}", op, context, describe(peek()));
  }
  void expect_newline() {
    if (at(Token::Newline)) {
      next();
      return;
    }
    if (at(Token::End) || at(Token::Dedent)) return;
    fail(peek().loc, "expected end of line, found {}", describe(peek()));
  }
  std::string expect_name(const char* context) {
    if (!at(Token::Name))
      fail(peek().loc, "expected a name {}, found {}", context, describe(peek()));
    return next().text;
  }

  AstFunction function() {
    AstFunction f;
    f.loc = next().loc;  // 'def'
    f.name = expect_name("after 'def'");
    expect_op("(", "after the function name");
    while (!at_op(")")) {
      AstParam p;
      p.loc = peek().loc;
      if (at_op("*")) fail(p.loc, "variadic parameters (*args) are not supported");
      p.name = expect_name("for a parameter");
      for (const auto& q : f.params)
        if (q.name == p.name) fail(p.loc, "duplicate parameter '{}' in '{}'", p.name, f.name);
      if (eat_op(":")) p.annotation = expr();
      if (eat_op("=")) p.default_value = expr();
      f.params.push_back(std::move(p));
      if (!eat_op(",")) break;
    }
    expect_op(")", "to close the parameter list");
    if (eat_op("->")) f.returns = expr();
    expect_op(":", "after the function signature");
    if (!at(Token::Newline))
      fail(peek().loc, "the body of '{}' must start on a new, indented line", f.name);
    next();
    if (!at(Token::Indent))
      fail(peek().loc, "expected an indented block for the body of '{}'", f.name);
    next();
    while (!at(Token::Dedent) && !at(Token::End)) {
      if (at(Token::Newline)) {
        next();
        continue;
      }
      f.body.push_back(statement(f));
    }
    if (at(Token::Dedent)) next();
    return f;
  }

  AstStmt statement(const AstFunction& f) {
    AstStmt s;
    s.loc = peek().loc;
    if (at(Token::Indent)) fail(s.loc, "unexpected indent");
    if (at_name("def"))
      fail(s.loc, "nested function definitions are not supported; define '{}' at the top level",
           peek(1).text);
    if (at_name("pass")) {
      next();
      expect_newline();
      s.kind = AstStmt::Expr;
      return s;
    }
    if (at_name("return")) {
      next();
      s.kind = AstStmt::Return;
      if (!at(Token::Newline) && !at(Token::End) && !at(Token::Dedent)) s.value = expr_list();
      expect_newline();
      return s;
    }
    if (at(Token::Name) && unsupported_keywords().count(peek().text))
      fail(s.loc, "'{}' is not supported in the kernel language (straight-line code only)",
           peek().text);
    // Assignment targets: NAME (',' NAME)* '='
    std::size_t save = pos_;
    std::vector<std::string> targets;
    while (at(Token::Name)) {
      targets.push_back(next().text);
      if (!eat_op(",")) break;
    }
    if (!targets.empty() && at_op("=")) {
      next();
      s.kind = AstStmt::Assign;
      s.targets = std::move(targets);
      s.value = expr_list();
      if (at_op("=")) fail(peek().loc, "chained assignment is not supported");
      expect_newline();
      return s;
    }
    if (!targets.empty() && (at_op("+=") || at_op("-=") || at_op("*=") || at_op("/=")))
      fail(peek().loc, "augmented assignment '{}' is not supported; write `{} = {} {} ...`",
           peek().text, targets[0], targets[0], peek().text.substr(0, 1));
    pos_ = save;
    s.kind = AstStmt::Expr;
    s.value = expr_list();
    if (s.value->kind != AstExpr::String)
      fail(s.loc, "expression statement in '{}' has no effect; assign it to a name or return it",
           f.name);
    expect_newline();
    return s;
  }

  // Every node is built here, so the tree's height is known and bounded: long left-associative
  // chains (`x + x + ... + x`, `x.T.T...`) are parsed in loops but still make deep trees.
  AstPtr make(AstExpr e) {
    auto grow = [&](const AstPtr& c) {
      if (c) e.height = std::max(e.height, c->height + 1);
    };
    for (const auto& a : e.args) grow(a);
    for (const auto& k : e.keywords) grow(k.value);
    for (const auto& s : e.slices) grow(s.index), grow(s.lo), grow(s.hi), grow(s.step);
    if (e.height > kMaxExpressionHeight)
      fail(e.loc,
           "expression nested too deeply (more than {} levels; a chain of operators counts one "
           "level per operator); split it into named steps",
           kMaxExpressionHeight);
    return std::make_shared<const AstExpr>(std::move(e));
  }

  AstPtr expr_list() {
    SourceLoc loc = peek().loc;
    AstPtr first = expr();
    if (!at_op(",")) return first;
    AstExpr t;
    t.kind = AstExpr::Tuple;
    t.loc = loc;
    t.args.push_back(first);
    while (eat_op(",")) {
      if (at(Token::Newline) || at(Token::End) || at_op(")")) break;
      t.args.push_back(expr());
    }
    return make(std::move(t));
  }

  struct DepthGuard {
    SyntaxParser& p;
    explicit DepthGuard(SyntaxParser& parser) : p(parser) {
      if (++p.depth_ > kMaxNesting)
        fail(p.peek().loc,
             "expression nested more than {} levels deep; split it into several statements",
             kMaxNesting);
    }
    ~DepthGuard() { --p.depth_; }
  };

  AstPtr binary(std::string op, AstPtr a, AstPtr b, SourceLoc loc) {
    AstExpr e;
    e.kind = AstExpr::Binary;
    e.name = std::move(op);
    e.loc = std::move(loc);
    e.args = {std::move(a), std::move(b)};
    return make(std::move(e));
  }

  bool at_comparison() {
    return at_op("<") || at_op(">") || at_op("==") || at_op("!=") || at_op("<=") || at_op(">=");
  }

  // expr: sum (comparison sum)?; a comparison gives a mask. Python's chained `a < b < c` means
  // `a < b and b < c`, which the language has no `and` for: an error, not NumPy's surprise.
  AstPtr expr() {
    DepthGuard g(*this);
    if (at_comparison()) fail(peek().loc, "expected an expression, found {}", describe(peek()));
    AstPtr lhs = sum();
    if (!at_comparison()) return lhs;
    Token op = next();
    AstPtr rhs = sum();
    if (at_comparison())
      fail(peek().loc,
           "chained comparisons like a < b < c are not supported; multiply the masks: (a < b) * "
           "(b < c)");
    return binary(op.text, lhs, rhs, op.loc);
  }

  AstPtr sum() {
    if (at_comparison()) fail(peek().loc, "expected an expression, found {}", describe(peek()));
    AstPtr lhs = term();
    while (at_op("+") || at_op("-")) {
      Token op = next();
      lhs = binary(op.text, lhs, term(), op.loc);
    }
    return lhs;
  }

  AstPtr term() {
    AstPtr lhs = factor();
    while (at_op("*") || at_op("/") || at_op("//") || at_op("%") || at_op("@")) {
      Token op = next();
      lhs = binary(op.text, lhs, factor(), op.loc);
    }
    return lhs;
  }

  AstPtr factor() {
    DepthGuard g(*this);
    if (at_op("-") || at_op("+")) {
      Token op = next();
      AstExpr e;
      e.kind = AstExpr::Unary;
      e.name = op.text;
      e.loc = op.loc;
      e.args = {factor()};
      return make(std::move(e));
    }
    AstPtr base = postfix();
    if (at_op("**")) {
      Token op = next();
      return binary("**", base, factor(), op.loc);
    }
    return base;
  }

  AstPtr postfix() {
    AstPtr e = atom();
    while (true) {
      if (at_op("(")) {
        Token open = next();
        AstExpr c;
        c.kind = AstExpr::Call;
        c.loc = e->loc;
        c.args.push_back(e);
        call_args(c);
        e = make(std::move(c));
      } else if (at_op("[")) {
        Token open = next();
        AstExpr s;
        s.kind = AstExpr::Subscript;
        s.loc = open.loc;
        s.args.push_back(e);
        do {
          if (at_op("]")) break;
          s.slices.push_back(slice_item());
        } while (eat_op(","));
        expect_op("]", "to close the subscript");
        if (s.slices.empty()) fail(open.loc, "empty subscript");
        e = make(std::move(s));
      } else if (at_op(".")) {
        Token dot = next();
        AstExpr a;
        a.kind = AstExpr::Attribute;
        a.loc = dot.loc;
        a.name = expect_name("after '.'");
        a.args.push_back(e);
        e = make(std::move(a));
      } else {
        return e;
      }
    }
  }

  void call_args(AstExpr& c) {
    bool seen_keyword = false;
    while (!at_op(")")) {
      if (at(Token::Name) && peek(1).kind == Token::Op && peek(1).text == "=") {
        AstKeyword k;
        k.loc = peek().loc;
        k.name = next().text;
        next();
        for (const auto& o : c.keywords)
          if (o.name == k.name) fail(k.loc, "keyword argument '{}' repeated", k.name);
        k.value = expr();
        c.keywords.push_back(std::move(k));
        seen_keyword = true;
      } else {
        if (at_op("*")) fail(peek().loc, "argument unpacking (*args) is not supported");
        if (seen_keyword) fail(peek().loc, "positional argument follows keyword argument");
        c.args.push_back(expr());
      }
      if (!eat_op(",")) break;
    }
    expect_op(")", "to close the argument list");
  }

  AstSlice slice_item() {
    AstSlice s;
    auto part = [&]() -> AstPtr {
      if (at_op(":") || at_op(",") || at_op("]")) return nullptr;
      return expr();
    };
    AstPtr first = part();
    if (!at_op(":")) {
      if (!first) fail(peek().loc, "expected an index or a slice, found {}", describe(peek()));
      s.index = first;
      return s;
    }
    s.is_slice = true;
    s.lo = first;
    next();
    s.hi = part();
    if (eat_op(":")) s.step = part();
    return s;
  }

  AstPtr atom() {
    const Token& tok = peek();
    AstExpr e;
    e.loc = tok.loc;
    switch (tok.kind) {
      case Token::Name:
        if (unsupported_keywords().count(tok.text))
          fail(tok.loc, "'{}' is not supported in the kernel language", tok.text);
        if (tok.text == "def" || tok.text == "return")
          fail(tok.loc, "unexpected '{}' inside an expression", tok.text);
        e.kind = AstExpr::Name;
        e.name = next().text;
        return make(std::move(e));
      case Token::Int:
        e.kind = AstExpr::Int;
        try {
          e.int_value = std::stoll(tok.text);
        } catch (const std::exception&) {
          fail(tok.loc, "integer literal {} is too large", tok.text);
        }
        next();
        return make(std::move(e));
      case Token::Float:
        e.kind = AstExpr::Float;
        try {
          e.float_value = std::stod(tok.text);
        } catch (const std::exception&) {
          fail(tok.loc,
               "number literal {} is out of the range of a 64-bit float (magnitudes from about "
               "2.2e-308 to 1.8e308); write a smaller exponent, or 0.0",
               tok.text);
        }
        next();
        return make(std::move(e));
      case Token::String:
        e.kind = AstExpr::String;
        e.name = next().text;
        return make(std::move(e));
      case Token::Op:
        if (tok.text == "(") {
          next();
          if (eat_op(")")) {
            e.kind = AstExpr::Tuple;
            return make(std::move(e));
          }
          AstPtr inner = expr();
          if (at_op(",")) {
            e.kind = AstExpr::Tuple;
            e.args.push_back(inner);
            while (eat_op(",")) {
              if (at_op(")")) break;
              e.args.push_back(expr());
            }
            expect_op(")", "to close the tuple");
            return make(std::move(e));
          }
          expect_op(")", "to close the parenthesis");
          return inner;
        }
        if (tok.text == "[") {
          next();
          e.kind = AstExpr::Tuple;
          while (!at_op("]")) {
            e.args.push_back(expr());
            if (!eat_op(",")) break;
          }
          expect_op("]", "to close the list");
          return make(std::move(e));
        }
        break;
      default:
        break;
    }
    fail(tok.loc, "expected an expression, found {}", describe(tok));
  }

  std::vector<Token> t_;
  std::string file_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

AstModule parse_syntax(const std::string& text, const std::string& file) {
  return SyntaxParser(tokenize(text, file), file).module();
}

}  // namespace ts::ir

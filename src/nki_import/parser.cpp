#include "tilesweep/nki_import/parser.h"

#include <set>

#include "tilesweep/nki_import/lexer.h"

namespace ts::nki {

namespace {

const std::set<std::string> kUnsupportedKeywords = {
    "while", "with",  "class", "lambda", "try",   "raise",    "global", "nonlocal",
    "yield", "async", "await", "del",    "break", "continue", "match"};

class Parser {
 public:
  explicit Parser(std::vector<Token> t) : t_(std::move(t)) {}

  Block file() {
    Block b;
    while (peek().kind != Tok::End) {
      if (peek().kind == Tok::Newline) {
        next();
        continue;
      }
      b.push_back(statement());
    }
    return b;
  }

 private:
  // ---- tokens ----
  const Token& peek(std::size_t k = 0) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  const Token& next() { return t_[std::min(i_++, t_.size() - 1)]; }
  bool is_op(const char* o, std::size_t k = 0) const {
    return peek(k).kind == Tok::Op && peek(k).text == o;
  }
  bool is_name(const char* n) const { return peek().kind == Tok::Name && peek().text == n; }
  bool accept(const char* o) {
    if (!is_op(o)) return false;
    next();
    return true;
  }
  [[noreturn]] void fail(const Token& at, const std::string& what) const {
    throw UserError(at.loc, what);
  }
  void expect(const char* o, const char* where) {
    if (!accept(o)) fail(peek(), fmt::format("expected '{}' {}", o, where));
  }
  std::string expect_name(const char* what) {
    if (peek().kind != Tok::Name) fail(peek(), fmt::format("expected {}", what));
    return next().text;
  }
  void end_of_statement() {
    if (accept(";") && peek().kind == Tok::Newline) {
    }
    if (peek().kind == Tok::Newline)
      next();
    else if (peek().kind != Tok::End && peek().kind != Tok::Dedent)
      fail(peek(), fmt::format("unexpected '{}' after the statement", peek().text));
  }

  struct Depth {
    int& d;
    Depth(int& depth, const Token& at) : d(depth) {
      if (++d > kMaxNesting) {
        --d;
        throw UserError(at.loc, fmt::format("nested more than {} levels deep; split the expression",
                                            kMaxNesting));
      }
    }
    ~Depth() { --d; }
  };

  // ---- statements ----
  Block suite() {
    expect(":", "before the block");
    Block b;
    if (peek().kind != Tok::Newline) {  // `if x: stmt` on one line
      b.push_back(simple_statement());
      return b;
    }
    next();
    if (peek().kind != Tok::Indent) fail(peek(), "expected an indented block");
    next();
    while (peek().kind != Tok::Dedent && peek().kind != Tok::End) b.push_back(statement());
    if (peek().kind == Tok::Dedent) next();
    return b;
  }

  Stmt statement() {
    Depth depth(depth_, peek());
    const Token& at = peek();
    if (at.kind == Tok::Indent) fail(at, "unexpected indentation");
    if (is_op("@") || is_name("def")) return def();
    if (is_name("for")) return for_stmt();
    if (is_name("if")) return if_stmt();
    if (at.kind == Tok::Name && kUnsupportedKeywords.count(at.text))
      fail(at, fmt::format("'{}' is not supported in NKI kernels read by tilesweep", at.text));
    return simple_statement();
  }

  Stmt def() {
    Stmt s;
    s.kind = StmtKind::Def;
    while (accept("@")) {
      s.decorators.push_back(expression());
      if (peek().kind == Tok::Newline) next();
    }
    s.loc = peek().loc;
    if (!is_name("def")) fail(peek(), "expected 'def' after the decorator");
    next();
    s.name = expect_name("the function's name");
    expect("(", "after the function's name");
    while (!accept(")")) {
      Param p;
      p.loc = peek().loc;
      if (is_op("*") || is_op("**")) fail(peek(), "*args / **kwargs parameters are not supported");
      p.name = expect_name("a parameter name");
      if (accept(":")) expression();  // annotation, ignored
      if (accept("=")) p.default_value = expression();
      s.params.push_back(std::move(p));
      if (!accept(",")) {
        expect(")", "after the parameters");
        break;
      }
    }
    if (accept("->")) expression();
    s.body = suite();
    return s;
  }

  Stmt for_stmt() {
    Stmt s;
    s.kind = StmtKind::For;
    s.loc = next().loc;
    s.targets.push_back(target_list());
    if (!is_name("in")) fail(peek(), "expected 'in' in the for statement");
    next();
    s.value = expression();
    s.body = suite();
    if (is_name("else")) fail(peek(), "for ... else is not supported");
    return s;
  }

  Stmt if_stmt() {
    Stmt s;
    s.kind = StmtKind::If;
    s.loc = next().loc;
    s.value = expression();
    s.body = suite();
    if (is_name("elif")) {
      s.orelse.push_back(if_stmt());
    } else if (is_name("else")) {
      next();
      s.orelse = suite();
    }
    return s;
  }

  Stmt simple_statement() {
    Stmt s;
    s.loc = peek().loc;
    if (is_name("pass")) {
      next();
    } else if (is_name("return")) {
      next();
      s.kind = StmtKind::Return;
      if (peek().kind != Tok::Newline && peek().kind != Tok::End) s.value = expression_list();
    } else if (is_name("assert")) {
      next();
      s.kind = StmtKind::Assert;
      s.value = expression();
      if (accept(",")) expression();  // the message
    } else if (is_name("import") || is_name("from")) {
      s = import_stmt();
      end_of_statement();
      return s;
    } else {
      assignment(s);
    }
    end_of_statement();
    return s;
  }

  void assignment(Stmt& s) {
    ExprPtr first = expression_list();
    static const std::set<std::string> kAug = {"+=", "-=", "*=", "/=", "//=", "**=", "&=", "|="};
    if (peek().kind == Tok::Op && kAug.count(peek().text)) {
      s.kind = StmtKind::AugAssign;
      s.op = next().text;
      s.targets.push_back(first);
      s.value = expression_list();
      return;
    }
    if (!is_op("=")) {
      s.kind = StmtKind::Expr;
      s.value = first;
      return;
    }
    s.kind = StmtKind::Assign;
    s.targets.push_back(first);
    while (accept("=")) s.targets.push_back(expression_list());
    s.value = s.targets.back();
    s.targets.pop_back();
  }

  Stmt import_stmt() {
    Stmt s;
    s.kind = StmtKind::Import;
    s.loc = peek().loc;
    bool from = next().text == "from";
    std::string path = dotted();
    if (!from) {
      s.name = path;
      s.alias = path.substr(0, path.find('.'));
      if (is_name("as")) next(), s.alias = expect_name("a name after 'as'");
      if (is_op(",")) fail(peek(), "import one module per statement");
      return s;
    }
    if (!is_name("import")) fail(peek(), "expected 'import'");
    next();
    if (is_op("*") || is_op("(")) fail(peek(), "write `from M import name` with one name");
    std::string name = expect_name("a name to import");
    s.name = path + "." + name;
    s.alias = name;
    if (is_name("as")) next(), s.alias = expect_name("a name after 'as'");
    if (is_op(",")) fail(peek(), "import one name per statement");
    return s;
  }

  std::string dotted() {
    std::string p = expect_name("a module name");
    while (accept(".")) p += "." + expect_name("a module name");
    return p;
  }

  // ---- expressions ----
  ExprPtr make(ExprKind k, SourceLoc loc, std::string text = {}, std::vector<ExprPtr> items = {}) {
    auto e = std::make_shared<Expr>();
    e->kind = k;
    e->loc = std::move(loc);
    e->text = std::move(text);
    e->items = std::move(items);
    return e;
  }

  ExprPtr target_list() {
    SourceLoc loc = peek().loc;
    std::vector<ExprPtr> items{binary(kBitOr)};
    if (!is_op(",")) return items[0];
    while (accept(",") && !is_name("in")) items.push_back(binary(kBitOr));
    return make(ExprKind::Tuple, loc, {}, std::move(items));
  }

  // a, b, c (a tuple) or one expression.
  ExprPtr expression_list() {
    SourceLoc loc = peek().loc;
    ExprPtr e = expression();
    if (!is_op(",")) return e;
    std::vector<ExprPtr> items{e};
    while (accept(",")) {
      if (peek().kind == Tok::Newline || is_op("=") || is_op(")") || peek().kind == Tok::End) break;
      items.push_back(expression());
    }
    return make(ExprKind::Tuple, loc, {}, std::move(items));
  }

  ExprPtr expression() {
    Depth depth(depth_, peek());
    if (is_name("lambda")) fail(peek(), "lambda is not supported");
    ExprPtr e = binary(kOr);
    if (!is_name("if")) return e;
    SourceLoc loc = next().loc;
    ExprPtr cond = binary(kOr);
    if (!is_name("else")) fail(peek(), "expected 'else' in the conditional expression");
    next();
    return make(ExprKind::IfElse, loc, {}, {e, cond, expression()});
  }

  // Binary levels, loosest first.
  enum Level { kOr, kAnd, kNot, kCompare, kBitOr, kBitXor, kBitAnd, kShift, kArith, kTerm, kUnary };

  bool level_op(Level l, std::string& op) const {
    const Token& t = peek();
    static const std::vector<std::vector<std::string>> ops = {
        {"or"},     {"and"},
        {},         {"<", "<=", ">", ">=", "==", "!=", "in", "is"},
        {"|"},      {"^"},
        {"&"},      {"<<", ">>"},
        {"+", "-"}, {"*", "/", "//", "%", "@"}};
    if (t.kind != Tok::Op && t.kind != Tok::Name) return false;
    for (const auto& o : ops[l])
      if (t.text == o && (t.kind == Tok::Op) == (o[0] < 'a' || o[0] > 'z')) return op = o, true;
    return false;
  }

  ExprPtr binary(Level l) {
    if (l == kNot) {
      if (!is_name("not")) return binary(kCompare);
      SourceLoc loc = next().loc;
      return make(ExprKind::Unary, loc, "not", {binary(kNot)});
    }
    if (l == kUnary) return unary();
    ExprPtr e = binary(static_cast<Level>(l + 1));
    std::string op;
    while (level_op(l, op)) {
      SourceLoc loc = next().loc;
      if (op == "in" || op == "is") fail(t_[i_ - 1], fmt::format("'{}' is not supported", op));
      e = make(ExprKind::Binary, loc, op, {e, binary(static_cast<Level>(l + 1))});
    }
    return e;
  }

  ExprPtr unary() {
    Depth depth(depth_, peek());
    if (is_op("-") || is_op("+") || is_op("~")) {
      SourceLoc loc = peek().loc;
      std::string op = next().text;
      return make(ExprKind::Unary, loc, op, {unary()});
    }
    ExprPtr e = postfix(atom());
    if (is_op("**")) {
      SourceLoc loc = next().loc;
      return make(ExprKind::Binary, loc, "**", {e, unary()});
    }
    return e;
  }

  ExprPtr postfix(ExprPtr e) {
    while (true) {
      SourceLoc loc = e->loc;  // a call or subscript is located where its callee / object starts
      if (accept(".")) {
        e = make(ExprKind::Attr, loc, expect_name("an attribute name"), {e});
      } else if (accept("(")) {
        e = call(e, loc);
      } else if (accept("[")) {
        e = make(ExprKind::Subscript, loc, {}, {e, subscript_list()});
        expect("]", "to close the subscript");
      } else {
        return e;
      }
    }
  }

  ExprPtr call(ExprPtr callee, SourceLoc loc) {
    ExprPtr e = make(ExprKind::Call, std::move(loc), {}, {callee});
    auto& args = const_cast<Expr&>(*e).args;
    while (!accept(")")) {
      if (is_op("*") || is_op("**")) fail(peek(), "*args / **kwargs arguments are not supported");
      Arg a;
      if (peek().kind == Tok::Name && is_op("=", 1)) {
        a.name = next().text;
        next();
      }
      a.value = expression();
      if (is_name("for")) fail(peek(), "comprehensions are not supported");
      args.push_back(std::move(a));
      if (!accept(",")) {
        expect(")", "to close the call");
        break;
      }
    }
    return e;
  }

  ExprPtr subscript_list() {
    SourceLoc loc = peek().loc;
    std::vector<ExprPtr> items{subscript()};
    bool tuple = false;
    while (accept(",")) {
      tuple = true;
      if (is_op("]")) break;
      items.push_back(subscript());
    }
    return tuple ? make(ExprKind::Tuple, loc, {}, std::move(items)) : items[0];
  }

  ExprPtr subscript() {
    SourceLoc loc = peek().loc;
    ExprPtr start = is_op(":") ? nullptr : expression();
    if (!accept(":")) return start;
    ExprPtr stop = (is_op(":") || is_op(",") || is_op("]")) ? nullptr : expression();
    ExprPtr step;
    if (accept(":") && !is_op(",") && !is_op("]")) step = expression();
    return make(ExprKind::Slice, loc, {}, {start, stop, step});
  }

  ExprPtr atom() {
    const Token& t = next();
    switch (t.kind) {
      case Tok::Int:
        return make(ExprKind::Int, t.loc, t.text);
      case Tok::Float:
        return make(ExprKind::Float, t.loc, t.text);
      case Tok::Str: {
        std::string s = t.text;
        while (peek().kind == Tok::Str) s += next().text;
        return make(ExprKind::Str, t.loc, s);
      }
      case Tok::Name:
        return name_atom(t);
      case Tok::Op:
        return bracket_atom(t);
      default:
        fail(t, "expected an expression");
    }
  }

  ExprPtr name_atom(const Token& t) {
    if (t.text == "True") return make(ExprKind::True, t.loc);
    if (t.text == "False") return make(ExprKind::False, t.loc);
    if (t.text == "None") return make(ExprKind::None, t.loc);
    if (kUnsupportedKeywords.count(t.text) || t.text == "def" || t.text == "for" || t.text == "if")
      fail(t, fmt::format("'{}' is not supported here", t.text));
    return make(ExprKind::Name, t.loc, t.text);
  }

  ExprPtr bracket_atom(const Token& t) {
    if (t.text == "...") return make(ExprKind::Ellipsis, t.loc);
    if (t.text == "." && is_op(".") && is_op(".", 1)) {
      next(), next();
      return make(ExprKind::Ellipsis, t.loc);
    }
    if (t.text == "(" || t.text == "[") {
      const char* close = t.text == "(" ? ")" : "]";
      ExprKind k = t.text == "(" ? ExprKind::Tuple : ExprKind::List;
      std::vector<ExprPtr> items;
      bool comma = false;
      while (!accept(close)) {
        items.push_back(expression());
        if (is_name("for")) fail(peek(), "comprehensions are not supported");
        if (!accept(",")) {
          expect(close, "to close the brackets");
          break;
        }
        comma = true;
      }
      if (k == ExprKind::Tuple && items.size() == 1 && !comma) return items[0];
      return make(k, t.loc, {}, std::move(items));
    }
    if (t.text == "{") fail(t, "dict and set literals are not supported");
    fail(t, fmt::format("unexpected '{}'", t.text));
  }

  std::vector<Token> t_;
  std::size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

Module parse_module(std::string_view source, const std::string& file) {
  Module m;
  m.file = file;
  m.body = Parser(tokenize(source, file)).file();
  return m;
}

}  // namespace ts::nki

#include "tilesweep/semantics/expr.h"

#include <cctype>
#include <cstdlib>

namespace ts::sem {

namespace {

constexpr int kMaxDepth = 64;

// Recursive-descent parser over one spec string.
class Parser {
 public:
  Parser(std::string_view text, SourceLoc where) : s_(text), where_(std::move(where)) {}

  ExprPtr expr_only() {
    auto e = expr();
    expect_end();
    return e;
  }

  Pattern pattern() {
    Pattern p;
    skip();
    expect('[');
    skip();
    if (!eat(']')) {
      do p.items.push_back(item(/*in_access=*/false));
      while (eat(','));
      expect(']');
    }
    expect_end();
    return p;
  }

  Item requirement() {
    Item it;
    skip();
    if (peek() == '*') {
      ++pos_;
      it.group = true;
      it.name = ident();
      expect('{');
      it.each = expr();
      expect('}');
    } else {
      it.expr = expr();
    }
    expect_end();
    return it;
  }

 private:
  [[noreturn]] void error(const std::string& what) {
    SourceLoc loc = where_;
    std::string msg = what + " in '" + std::string(s_) + "'";
    if (loc.col > 0) loc.col += static_cast<int>(pos_);
    throw UserError(loc, msg);
  }

  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  char peek() {
    skip();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool eat(std::string_view t) {
    skip();
    if (s_.substr(pos_, t.size()) != t) return false;
    pos_ += t.size();
    return true;
  }
  void expect(char c) {
    if (!eat(c)) error(std::string("expected '") + c + "'");
  }
  void expect_end() {
    if (peek() != '\0') error("unexpected '" + std::string(1, s_[pos_]) + "'");
  }
  std::string ident() {
    skip();
    std::size_t start = pos_;
    if (pos_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
      while (pos_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
        ++pos_;
    if (start == pos_) error("expected a name");
    return std::string(s_.substr(start, pos_ - start));
  }
  static bool is_ident_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
  }

  ExprPtr make(Expr e) { return std::make_shared<const Expr>(std::move(e)); }

  ExprPtr expr() {
    if (++depth_ > kMaxDepth) error("expression nested too deeply");
    auto e = comparison();
    --depth_;
    return e;
  }

  ExprPtr comparison() {
    auto lhs = additive();
    static const std::pair<std::string_view, BinOp> ops[] = {{"<=", BinOp::Le}, {">=", BinOp::Ge},
                                                             {"==", BinOp::Eq}, {"!=", BinOp::Ne},
                                                             {"<", BinOp::Lt},  {">", BinOp::Gt}};
    for (auto& [t, op] : ops) {
      if (eat(t)) return binary(op, lhs, additive());
    }
    return lhs;
  }

  ExprPtr binary(BinOp op, ExprPtr a, ExprPtr b) {
    Expr e;
    e.kind = Expr::Binary;
    e.op = op;
    e.col = a->col;
    e.args = {std::move(a), std::move(b)};
    return make(std::move(e));
  }

  ExprPtr additive() {
    auto lhs = multiplicative();
    while (true) {
      if (eat('+'))
        lhs = binary(BinOp::Add, lhs, multiplicative());
      else if (eat('-'))
        lhs = binary(BinOp::Sub, lhs, multiplicative());
      else
        return lhs;
    }
  }

  ExprPtr multiplicative() {
    auto lhs = unary();
    while (true) {
      if (eat("//"))
        lhs = binary(BinOp::FloorDiv, lhs, unary());
      else if (eat('*'))
        lhs = binary(BinOp::Mul, lhs, unary());
      else if (eat('/'))
        lhs = binary(BinOp::Div, lhs, unary());
      else if (eat('%'))
        lhs = binary(BinOp::Mod, lhs, unary());
      else
        return lhs;
    }
  }

  ExprPtr unary() {
    if (eat('-')) {
      Expr e;
      e.kind = Expr::Neg;
      e.col = static_cast<int>(pos_);
      if (++depth_ > kMaxDepth) error("expression nested too deeply");
      e.args = {unary()};
      --depth_;
      return make(std::move(e));
    }
    return primary();
  }

  ExprPtr primary() {
    skip();
    int col = static_cast<int>(pos_) + 1;
    char c = peek();
    if (c == '(') {
      ++pos_;
      auto e = expr();
      expect(')');
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      char* end = nullptr;
      std::string tmp(s_.substr(pos_));
      double v = std::strtod(tmp.c_str(), &end);
      if (end == tmp.c_str()) error("bad number");
      pos_ += static_cast<std::size_t>(end - tmp.c_str());
      Expr e;
      e.kind = Expr::Number;
      e.number = v;
      e.col = col;
      return make(std::move(e));
    }
    if (!is_ident_start(c)) error(c ? "unexpected '" + std::string(1, c) + "'" : "unexpected end");
    std::string name = ident();
    if (eat('(')) return call(name, col);
    if (eat('[')) {
      Expr e;
      e.kind = Expr::Access;
      e.name = name;
      e.col = col;
      skip();
      if (!eat(']')) {
        do e.items.push_back(item(/*in_access=*/true));
        while (eat(','));
        expect(']');
      }
      return make(std::move(e));
    }
    Expr e;
    e.kind = Expr::Name;
    e.name = name;
    e.col = col;
    return make(std::move(e));
  }

  ExprPtr call(const std::string& name, int col) {
    static const std::pair<std::string_view, Reducer> reducers[] = {{"sum", Reducer::Sum},
                                                                    {"prod", Reducer::Prod},
                                                                    {"max", Reducer::Max},
                                                                    {"min", Reducer::Min}};
    Expr e;
    e.col = col;
    e.name = name;
    for (auto& [n, r] : reducers) {
      if (name != n) continue;
      e.kind = Expr::Reduce;
      e.reducer = r;
      // sum(k, body) | sum(j < n, body) | sum(j <= n, body)
      std::string var = ident();
      if (eat("<=")) {
        e.inclusive = true;
        e.bound = expr();
      } else if (eat('<')) {
        e.bound = expr();
      }
      e.name = var;
      expect(',');
      e.args = {expr()};
      expect(')');
      return make(std::move(e));
    }
    e.kind = Expr::Call;
    e.name = name;
    skip();
    if (!eat(')')) {
      do e.args.push_back(expr());
      while (eat(','));
      expect(')');
    }
    return make(std::move(e));
  }

  Item item(bool in_access) {
    Item it;
    skip();
    if (eat('*')) {
      it.group = true;
      it.name = ident();
      while (true) {
        if (eat('%'))
          it.permute = ident();
        else if (eat('{')) {
          it.each = expr();
          expect('}');
        } else if (!in_access && eat('='))
          it.from_attr = ident();
        else if (in_access && eat('~'))
          it.reshape_from = ident();
        else
          break;
      }
    } else {
      // `name@attr`, `name : expr`, or an expression (a bare name is a dim).
      std::size_t save = pos_;
      bool done = false;
      if (!in_access && is_ident_start(peek())) {
        std::string name = ident();
        if (eat('@')) {
          it.name = name;
          it.position = ident();
          done = true;
        } else if (peek() == ':') {
          ++pos_;
          it.name = name;
          it.expr = expr();
          done = true;
        } else {
          pos_ = save;
        }
      }
      if (!done) {
        it.expr = expr();
        if (!in_access && it.expr->kind == Expr::Name) it.name = it.expr->name;
      }
    }
    if (!in_access && eat('?')) it.flag = ident();
    return it;
  }

  std::string_view s_;
  SourceLoc where_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

ExprPtr parse_expr(std::string_view text, const SourceLoc& where) {
  return Parser(text, where).expr_only();
}

Pattern parse_pattern(std::string_view text, const SourceLoc& where) {
  return Parser(text, where).pattern();
}

Item parse_requirement(std::string_view text, const SourceLoc& where) {
  return Parser(text, where).requirement();
}

std::string to_string(BinOp op) {
  switch (op) {
    case BinOp::Add:
      return "+";
    case BinOp::Sub:
      return "-";
    case BinOp::Mul:
      return "*";
    case BinOp::Div:
      return "/";
    case BinOp::FloorDiv:
      return "//";
    case BinOp::Mod:
      return "%";
    case BinOp::Lt:
      return "<";
    case BinOp::Le:
      return "<=";
    case BinOp::Gt:
      return ">";
    case BinOp::Ge:
      return ">=";
    case BinOp::Eq:
      return "==";
    case BinOp::Ne:
      return "!=";
  }
  return "?";
}

namespace {
// An expression without the parentheses around its outermost operator.
std::string top_level(const Expr& e) {
  std::string s = to_string(e);
  if (e.kind == Expr::Binary && s.size() >= 2) return s.substr(1, s.size() - 2);
  return s;
}
}  // namespace

std::string to_string(const Item& it) {
  std::string s;
  if (it.group) {
    s = "*" + it.name;
    if (!it.permute.empty()) s += "%" + it.permute;
    if (it.each) s += "{" + top_level(*it.each) + "}";
    if (!it.from_attr.empty()) s += "=" + it.from_attr;
    if (!it.reshape_from.empty()) s += "~" + it.reshape_from;
  } else if (!it.position.empty()) {
    s = it.name + "@" + it.position;
  } else if (it.expr && !(it.expr->kind == Expr::Name && it.expr->name == it.name) &&
             !it.name.empty()) {
    s = it.name + " : " + to_string(*it.expr);
  } else if (it.expr) {
    s = top_level(*it.expr);
  } else {
    s = it.name;
  }
  if (!it.flag.empty()) s += "?" + it.flag;
  return s;
}

std::string to_string(const Expr& e) {
  auto num = [](double v) {
    std::string s = fmt::format("{}", v);
    return s;
  };
  switch (e.kind) {
    case Expr::Number:
      return num(e.number);
    case Expr::Name:
      return e.name;
    case Expr::Neg:
      return "-" + to_string(*e.args[0]);
    case Expr::Binary:
      return "(" + to_string(*e.args[0]) + " " + to_string(e.op) + " " + to_string(*e.args[1]) +
             ")";
    case Expr::Call: {
      std::string s = e.name + "(";
      for (std::size_t i = 0; i < e.args.size(); ++i) s += (i ? ", " : "") + to_string(*e.args[i]);
      return s + ")";
    }
    case Expr::Reduce: {
      static const char* names[] = {"sum", "prod", "max", "min"};
      std::string s = std::string(names[static_cast<int>(e.reducer)]) + "(" + e.name;
      if (e.bound) s += (e.inclusive ? " <= " : " < ") + to_string(*e.bound);
      return s + ", " + to_string(*e.args[0]) + ")";
    }
    case Expr::Access: {
      if (e.bare) return e.name;
      std::string s = e.name + "[";
      for (std::size_t i = 0; i < e.items.size(); ++i) s += (i ? ", " : "") + to_string(e.items[i]);
      return s + "]";
    }
  }
  return "?";
}

}  // namespace ts::sem

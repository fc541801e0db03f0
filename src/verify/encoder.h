// Encodes a kernel's outputs as Z3 terms over symbolic dims and output indices, from the
// nodes' instantiated element expressions (sem::TermGraph). Besides its value, each element
// has a definedness condition: every divisor non-zero, every log argument positive, every sqrt
// argument non-negative, on the path that computes it (both branches of a select are computed,
// as in NumPy, but only the chosen one matters). Facts that hold for every argument (exp > 0)
// are collected for the solver.
#pragma once

#include <z3++.h>

#include <map>
#include <string>
#include <vector>

#include "normal_form.h"
#include "tilesweep/ir/graph.h"

namespace ts::verify {

// Shared between the two sides of a query: dims by name, inputs by parameter position.
class Symbols {
 public:
  explicit Symbols(z3::context& ctx) : ctx_(ctx) {}
  z3::expr dim(const std::string& name);
  z3::expr dim_expr(const sem::Dim& d);
  // The uninterpreted tensor of parameter `position` with `rank` indices.
  z3::func_decl input(int position, int rank);
  const std::map<std::string, z3::expr>& dims() const { return dims_; }
  z3::context& ctx() { return ctx_; }

 private:
  z3::context& ctx_;
  std::map<std::string, z3::expr> dims_;
  std::map<std::pair<int, int>, z3::func_decl> inputs_;
};

// An output element: its value in normal form and where it is defined.
struct Element {
  Poly value;
  z3::expr defined;  // Bool
};

class Encoder {
 public:
  // `prefix` keeps the reduction variables of the two sides apart; `param_position[i]` is the
  // shared position of the kernel's parameter i (parameters are matched by name).
  Encoder(const ir::Kernel& k, Symbols& symbols, NormalForm& nf, std::string prefix,
          std::vector<int> param_position);

  // The value of node `id` at `index`, in normal form, and its definedness.
  Element element(int id, const std::vector<z3::expr>& index);
  // Facts true of every argument (exp(u) > 0, sqrt(u) >= 0) for the terms encoded so far.
  const std::vector<z3::expr>& facts() const { return facts_; }

 private:
  struct Val {
    explicit Val(z3::expr e) : i(std::move(e)) {}
    bool is_real = false;
    z3::expr i;  // Int or Bool (unused when is_real)
    Poly p;
  };
  // A reduction variable's range [offset, offset + extent) as the body sees it: var + offset.
  struct Range {
    z3::expr var, extent;
  };
  using Vars = std::vector<z3::expr>;

  Poly node(int id, const std::vector<z3::expr>& index);
  Val term(const ir::Node& n, int t, Vars& vars, const std::vector<z3::expr>& index);
  Val arith(const ir::Node& n, const sem::TermNode& tn, Vars& vars,
            const std::vector<z3::expr>& index);
  Val compare(const ir::Node& n, const sem::TermNode& tn, Vars& vars,
              const std::vector<z3::expr>& index);
  Val select(const ir::Node& n, const sem::TermNode& tn, Vars& vars,
             const std::vector<z3::expr>& index);
  Val call(const ir::Node& n, const sem::TermNode& tn, Vars& vars,
           const std::vector<z3::expr>& index);
  Val reduce(const ir::Node& n, const sem::TermNode& tn, Vars& vars,
             const std::vector<z3::expr>& index);
  Poly reduce_piece(const ir::Node& n, const sem::TermNode& tn, Vars& vars,
                    const std::vector<z3::expr>& index, bool split, const z3::expr& offset,
                    const z3::expr& extent);
  Val load(const ir::Node& n, const sem::TermNode& t, Vars& vars,
           const std::vector<z3::expr>& index);
  z3::expr as_int(const Val& v, const ir::Node& n);
  Poly as_real(const Val& v);
  Val real(Poly p);
  z3::expr numeral(double v);

  // exp and log by the laws of exponents (see theory.cpp).
  Poly exp_of(const Poly& arg);
  Poly log_of(const Poly& arg);
  z3::func_decl func(const std::string& name);
  bool positive(const Poly& p);
  // A condition for the current element to be defined.
  void require(const z3::expr& condition);
  // Decides `c` from the ranges of split reductions (0 <= var < extent), when they settle it.
  z3::expr settle(const z3::expr& c);

  const ir::Kernel& k_;
  Symbols& sym_;
  NormalForm& nf_;
  std::string prefix_;
  std::vector<int> param_position_;
  int next_var_ = 0;
  struct Memo {
    Poly p;
    std::vector<z3::expr> conditions;
  };
  std::map<std::string, Memo> memo_;
  std::map<std::string, z3::func_decl> funcs_;
  std::vector<z3::expr>* conditions_ = nullptr;
  std::vector<z3::expr> facts_;
  std::vector<Range> split_ranges_;
};

}  // namespace ts::verify

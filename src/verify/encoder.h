// Encodes a kernel's outputs as Z3 terms over symbolic dims and output indices, from the
// nodes' instantiated element expressions (sem::TermGraph).
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

class Encoder {
 public:
  // `prefix` keeps the reduction variables of the two sides apart.
  Encoder(const ir::Kernel& k, Symbols& symbols, NormalForm& nf, std::string prefix)
      : k_(k), sym_(symbols), nf_(nf), prefix_(std::move(prefix)) {}

  // The value of node `id` at `index`, in normal form.
  Poly node(int id, const std::vector<z3::expr>& index);

 private:
  struct Val {
    explicit Val(z3::expr e) : i(std::move(e)) {}
    bool is_real = false;
    z3::expr i;  // Int or Bool (unused when is_real)
    Poly p;
  };
  Val term(const ir::Node& n, int t, std::vector<z3::expr>& vars, const std::vector<z3::expr>& index);
  z3::expr as_int(const Val& v, const ir::Node& n);
  Poly as_real(const Val& v);
  Val load(const ir::Node& n, const sem::TermNode& t, std::vector<z3::expr>& vars, const std::vector<z3::expr>& index);
  z3::expr numeral(double v);

  const ir::Kernel& k_;
  Symbols& sym_;
  NormalForm& nf_;
  std::string prefix_;
  int next_var_ = 0;
  std::map<std::string, Poly> memo_;
  std::map<std::string, z3::func_decl> funcs_;
};

}  // namespace ts::verify

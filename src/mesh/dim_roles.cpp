#include "tilesweep/mesh/dim_roles.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace ts::mesh {

const char* dim_role_name(DimRole r) {
  switch (r) {
    case DimRole::Parallel:
      return "parallel";
    case DimRole::Contracted:
      return "contracted";
    case DimRole::Fixed:
      return "fixed";
  }
  return "?";
}

namespace {

using sem::TermGraph;
using sem::TermNode;
using sem::TermOp;

// The dim's name when the size is exactly one symbol.
std::optional<std::string> bare_symbol(const sem::Dim& d) {
  std::vector<std::string> s = d.symbols();
  if (s.size() == 1 && d == sem::Dim::symbol(s[0])) return s[0];
  return std::nullopt;
}

bool is_const(const TermNode& n, double v) {
  if (n.op == TermOp::Const) return n.value == v;
  return n.op == TermOp::Size && n.size.is_const() &&
         n.size.value() == static_cast<std::int64_t>(v);
}

// What one node's element expression does with the dims; fills `taint` and `reductions`.
class BodyScan {
 public:
  BodyScan(const ir::Kernel& k, const ir::Node& n, std::map<std::string, std::string>& taint,
           std::map<std::string, std::vector<std::pair<int, sem::Reducer>>>& reductions, int id)
      : k_(k), n_(n), g_(n.body), taint_(taint), reductions_(reductions), id_(id) {}

  void run() {
    for (int i = 0; i < static_cast<int>(g_.nodes.size()); ++i) {
      const TermNode& t = g_.nodes[i];
      if (t.op == TermOp::Reduce) reduce_of_[t.var] = i;
    }
    for (int i = 0; i < static_cast<int>(g_.nodes.size()); ++i) {
      const TermNode& t = g_.nodes[i];
      if (t.op == TermOp::Load) load(i);
      if (t.op == TermOp::Reduce &&
          (g_.nodes[t.args[0]].op == TermOp::Size || g_.nodes[t.args[0]].op == TermOp::Const))
        consumed_.insert({i, 0});
    }
    // Any other use of an index or a size makes the value depend on the dim's extent.
    std::set<int> used{g_.root};  // terms with a use other than plain indexing
    for (int i = 0; i < static_cast<int>(g_.nodes.size()); ++i)
      for (int a = 0; a < static_cast<int>(g_.nodes[i].args.size()); ++a)
        if (!consumed_.count({i, a})) used.insert(g_.nodes[i].args[a]);
    for (int c : used) {
      const TermNode& t = g_.nodes[c];
      if (t.op == TermOp::Index) taint_symbols(var_size(t.var), "its index is used in arithmetic");
      if (t.op == TermOp::Size) taint_symbols(t.size, "its size is used as a value");
    }
  }

 private:
  // The size an index variable ranges over: an output axis or a reduction's extent.
  sem::Dim var_size(int var) const {
    if (var < g_.rank) return n_.shape[var];
    auto r = reduce_of_.find(var);
    if (r == reduce_of_.end()) return sem::Dim(0);
    const TermNode& e = g_.nodes[g_.nodes[r->second].args[0]];
    return e.op == TermOp::Size ? e.size : sem::Dim(static_cast<std::int64_t>(e.value));
  }

  // The index variable term `id` equals (x + 0, 1 * x, ...), marking the edges it passes.
  std::optional<int> identity_var(int id, std::vector<std::pair<int, int>>& path) const {
    const TermNode& t = g_.nodes[id];
    if (t.op == TermOp::Index) return t.var;
    bool add = t.op == TermOp::Add || t.op == TermOp::Sub,
         mul = t.op == TermOp::Mul || t.op == TermOp::FloorDiv;
    if (!add && !mul) return std::nullopt;
    double unit = add ? 0 : 1;
    for (int a : {0, 1}) {
      if ((a == 0 && t.op != TermOp::Add && t.op != TermOp::Mul) ||
          !is_const(g_.nodes[t.args[a]], unit))
        continue;
      path.push_back({id, 1 - a});
      path.push_back({id, a});
      return identity_var(t.args[1 - a], path);
    }
    return std::nullopt;
  }

  void load(int load_id) {
    const TermNode& t = g_.nodes[load_id];
    const ir::Node& in = k_.node(n_.inputs[t.operand]);
    for (int j = 0; j < static_cast<int>(t.args.size()); ++j) {
      const sem::Dim& size = in.shape[j];
      if (is_const(g_.nodes[t.args[j]], 0) && size == sem::Dim(1)) {  // a broadcast axis
        consumed_.insert({load_id, j});
        continue;
      }
      std::vector<std::pair<int, int>> path{{load_id, j}};
      std::optional<int> v = identity_var(t.args[j], path);
      if (!v) {
        taint_symbols(size, fmt::format("'{}' indexes it with an offset or stride", n_.op));
        continue;
      }
      consumed_.insert(path.begin(), path.end());
      if (*v < g_.rank) {
        if (!(size == n_.shape[*v]))
          taint_symbols(size, fmt::format("'{}' maps it to another size", n_.op));
        continue;
      }
      const TermNode& red = g_.nodes[reduce_of_.at(*v)];
      const TermNode& ext = g_.nodes[red.args[0]];
      if (!(ext.op == TermOp::Size && ext.size == size) &&
          !(ext.op == TermOp::Const && size.is_const())) {
        taint_symbols(size, fmt::format("'{}' reduces over part of it", n_.op));
      } else if (auto s = bare_symbol(size)) {
        if (red.reducer == sem::Reducer::Prod)
          taint_symbols(size, fmt::format("'{}' multiplies over it", n_.op));
        else
          reductions_[*s].push_back({id_, red.reducer});
      }
    }
  }

  void taint_symbols(const sem::Dim& d, const std::string& why) {
    for (const std::string& s : d.symbols()) taint_.emplace(s, why);
  }

  const ir::Kernel& k_;
  const ir::Node& n_;
  const TermGraph& g_;
  std::map<std::string, std::string>& taint_;
  std::map<std::string, std::vector<std::pair<int, sem::Reducer>>>& reductions_;
  int id_;
  std::map<int, int> reduce_of_;            // reduction variable -> its Reduce term
  std::set<std::pair<int, int>> consumed_;  // (term, arg) edges that index an operand plainly
};

}  // namespace

std::vector<DimInfo> classify_dims(const ir::Kernel& kernel) {
  std::map<std::string, std::string> taint;  // dim -> the first reason it cannot be split
  std::map<std::string, std::vector<std::pair<int, sem::Reducer>>> reductions;
  std::vector<int> users(kernel.nodes.size(), 0);
  for (int id = 0; id < static_cast<int>(kernel.nodes.size()); ++id) {
    const ir::Node& n = kernel.node(id);
    for (int in : n.inputs) ++users[in];
    std::set<std::string> seen;
    for (const sem::Dim& d : n.shape) {
      if (auto s = bare_symbol(d); s && !seen.insert(*s).second)
        taint.emplace(*s,
                      fmt::format("a value has it on two axes ({})", sem::format_shape(n.shape)));
      if (!bare_symbol(d))
        for (const std::string& s : d.symbols())
          taint.emplace(s, fmt::format("a value has size {}", d.str()));
    }
    if (n.spec) BodyScan(kernel, n, taint, reductions, id).run();
  }
  std::set<std::string> in_outputs;
  for (int o : kernel.outputs)
    for (const sem::Dim& d : kernel.node(o).shape)
      if (auto s = bare_symbol(d)) in_outputs.insert(*s);

  std::vector<DimInfo> out;
  for (const std::string& dim : kernel.dims) {
    DimInfo info{dim};
    auto fixed = [&](std::string why) { info.reason = std::move(why); };
    auto red = reductions.find(dim);
    if (auto t = taint.find(dim); t != taint.end()) {
      fixed(t->second);
    } else if (red == reductions.end()) {
      if (in_outputs.count(dim))
        info.role = DimRole::Parallel;
      else
        fixed("it reaches no output");
    } else if (in_outputs.count(dim)) {
      fixed("it is reduced and also reaches an output");
    } else {
      info.role = DimRole::Contracted;
      info.reducer = red->second.front().second;
      for (auto [id, reducer] : red->second) {
        const ir::Node& n = kernel.node(id);
        bool is_output =
            std::find(kernel.outputs.begin(), kernel.outputs.end(), id) != kernel.outputs.end();
        if (!is_output || users[id] > 0) {
          info.role = DimRole::Fixed;
          fixed(
              fmt::format("'{}' reduces it and its result feeds other ops (only reductions "
                          "producing an output are split)",
                          n.op));
          break;
        }
        if (reducer != info.reducer) {
          info.role = DimRole::Fixed;
          fixed("it is reduced in different ways");
          break;
        }
        if (info.reduced_at.empty() || info.reduced_at.back() != id) info.reduced_at.push_back(id);
      }
    }
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace ts::mesh

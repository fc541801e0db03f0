#include "tilesweep/lower/region.h"

#include <algorithm>
#include <map>
#include <set>

#include "tilesweep/ir/graph_edit.h"
#include "tilesweep/lower/index_source.h"
#include "tilesweep/verify/cache.h"

namespace ts::lower {

namespace {

bool is_one(const sem::Dim& d) { return d.is_const() && d.value() == 1; }

bool elementwise(const ir::Node& n) {
  return classify(n) == OpClass::Compute && n.spec->broadcast == std::vector<std::string>{"S"} &&
         n.spec->contract.empty() && !n.attrs.count("axis");
}

// Masks stay out of regions: an op reading one computes it inside its own tile form.
bool in_regions(const ir::Kernel& k, int node) {
  return elementwise(k.nodes[node]) && !is_position(k, node) && !reads_positions(k, node);
}

// A constant made of literals alone (no dim used as a value): inlined into a region's kernel.
bool literal(const ir::Kernel& k, int node) {
  const ir::Node& n = k.nodes[node];
  if (n.param >= 0 || n.op == "dim") return false;
  return std::all_of(n.inputs.begin(), n.inputs.end(), [&](int in) { return literal(k, in); });
}

// Builds a region's tile-level kernel: parameters [P, F] (or [P, 1] for a per-row operand) for
// the values read from outside, literal constants copied in, the ops in node order.
class RegionBuilder {
 public:
  RegionBuilder(const ir::Kernel& k, int root, const std::vector<int>& members)
      : k_(k), root_(root), out_(tail2(k.nodes[root].shape)) {
    nodes_ = members;
    nodes_.push_back(root);
    std::sort(nodes_.begin(), nodes_.end());
  }

  std::optional<RegionCandidate> build() {
    if (out_.size() != 2) return std::nullopt;
    RegionCandidate r;
    r.root = root_;
    for (int n : nodes_)
      if (n != root_) r.members.push_back(n);
    t_.name = "region";
    for (int n : nodes_) {
      const ir::Node& node = k_.nodes[n];
      std::vector<int> ins;
      for (std::size_t i = 0; i < node.inputs.size(); ++i) {
        int in = node.inputs[i];
        std::optional<int> id = value(in, n, static_cast<int>(i), r.operands);
        if (!id) return std::nullopt;
        ins.push_back(*id);
      }
      try {
        at_[n] = ir::add_op(t_, *node.spec, ins, node.attrs, node.loc);
      } catch (const UserError&) {
        return std::nullopt;
      }
    }
    t_.outputs = {at_.at(root_)};
    const std::vector<sem::Dim> tile = {sem::Dim::symbol("P"), sem::Dim::symbol("F")};
    if (t_.nodes[t_.outputs[0]].shape != tile) return std::nullopt;
    r.op.key = verify::canonical_text(t_);
    r.op.kernel = std::move(t_);
    return r;
  }

 private:
  static std::vector<sem::Dim> tail2(const std::vector<sem::Dim>& s) {
    if (s.size() < 2) return {};
    return {s.end() - 2, s.end()};
  }

  // The region kernel's node for kernel node `in`, read by `reader` as input `i`.
  std::optional<int> value(int in, int reader, int i, std::vector<std::pair<int, int>>& operands) {
    if (auto it = at_.find(in); it != at_.end()) return it->second;
    if (is_constant(k_, in) && literal(k_, in)) return copy_constant(in);
    // An outside value: its tile aligned with the output tile, as tile_op aligns an operand.
    const auto& s = k_.nodes[in].shape;
    std::vector<sem::Dim> t(
        s.end() - static_cast<std::ptrdiff_t>(std::min<std::size_t>(2, s.size())), s.end());
    while (t.size() < 2) t.insert(t.begin(), sem::Dim(1));
    bool row_scalar = is_one(t[1]);
    if (!row_scalar && !(t[1] == out_[1])) return std::nullopt;
    if (!is_one(t[0]) && !(t[0] == out_[0])) return std::nullopt;
    std::vector<sem::Dim> shape = {sem::Dim::symbol("P"),
                                   row_scalar ? sem::Dim(1) : sem::Dim::symbol("F")};
    ir::Param p;
    p.name = operands.empty()       ? "x"
             : operands.size() == 1 ? "y"
                                    : "z" + std::to_string(operands.size());
    p.shape = shape;
    p.dtype = k_.nodes[in].dtype;
    ir::Node input;
    input.op = "input";
    input.shape = shape;
    input.dtype = p.dtype;
    input.param = static_cast<int>(t_.params.size());
    input.label = p.name;
    input.origin = input.param;
    p.node = static_cast<int>(t_.nodes.size());
    t_.nodes.push_back(std::move(input));
    t_.params.push_back(std::move(p));
    for (const auto& d : shape)
      for (const auto& sym : d.symbols())
        if (std::find(t_.dims.begin(), t_.dims.end(), sym) == t_.dims.end()) t_.dims.push_back(sym);
    operands.push_back({reader, i});
    at_[in] = t_.params.back().node;
    return at_[in];
  }

  int copy_constant(int in) {
    if (auto it = at_.find(in); it != at_.end()) return it->second;
    const ir::Node& n = k_.nodes[in];
    std::vector<int> ins;
    for (int x : n.inputs) ins.push_back(copy_constant(x));
    return at_[in] = ir::add_op(t_, *n.spec, ins, n.attrs, n.loc);
  }

  const ir::Kernel& k_;
  int root_;
  std::vector<sem::Dim> out_;
  std::vector<int> nodes_;
  ir::Kernel t_;
  std::map<int, int> at_;  // kernel node -> region kernel node
};

// The region's operands read as full [P, F] tiles (not per-row [P, 1] values).
int full_tiles(const RegionCandidate& r) {
  int n = 0;
  for (const auto& p : r.op.kernel.params) n += p.shape.size() == 2 && !is_one(p.shape[1]);
  return n;
}

}  // namespace

int max_tile_operands(const sem::InstrTable& isa) {
  int most = 0;
  for (const auto& name : isa.names()) {
    int tiles = 0;
    for (const sem::Pattern& p : isa.find(name)->op.shapes) {
      const sem::ExprPtr& last = p.items.empty() ? nullptr : p.items.back().expr;
      bool one = last && last->kind == sem::Expr::Number && last->number == 1;
      tiles += !p.items.empty() && !one;
    }
    most = std::max(most, tiles);
  }
  return most;
}

std::vector<RegionCandidate> region_candidates(const ir::Kernel& k, int max_tiles, int max_ops,
                                               int max_per_root) {
  std::vector<std::vector<int>> users(k.nodes.size());
  for (std::size_t i = 0; i < k.nodes.size(); ++i)
    for (int in : k.nodes[i].inputs) users[in].push_back(static_cast<int>(i));
  auto output = [&](int n) { return std::count(k.outputs.begin(), k.outputs.end(), n) > 0; };
  std::vector<RegionCandidate> out;
  for (std::size_t r = 0; r < k.nodes.size(); ++r) {
    const int root = static_cast<int>(r);
    if (!in_regions(k, root) || is_constant(k, root)) continue;
    // Breadth-first over the regions rooted here, smaller first: a region grows by one input of
    // its nodes that is element-wise, shaped like the root and read only inside the region.
    std::vector<std::vector<int>> todo = {{root}};
    std::set<std::vector<int>> seen = {{root}};
    int made = 0;
    for (std::size_t at = 0; at < todo.size() && made < max_per_root; ++at) {
      const std::vector<int> region = todo[at];
      if (static_cast<int>(region.size()) >= max_ops) continue;
      for (int n : region)
        for (int in : k.nodes[n].inputs) {
          const ir::Node& m = k.nodes[in];
          if (std::count(region.begin(), region.end(), in) || !in_regions(k, in) ||
              is_constant(k, in) || output(in) || m.shape != k.nodes[r].shape)
            continue;
          if (!std::all_of(users[in].begin(), users[in].end(),
                           [&](int u) { return std::count(region.begin(), region.end(), u) > 0; }))
            continue;
          std::vector<int> grown = region;
          grown.push_back(in);
          std::sort(grown.begin(), grown.end());
          if (!seen.insert(grown).second || made >= max_per_root) continue;
          todo.push_back(grown);
          std::vector<int> members;
          for (int x : grown)
            if (x != root) members.push_back(x);
          auto c = RegionBuilder(k, root, members).build();
          if (c && full_tiles(*c) <= max_tiles) {
            out.push_back(std::move(*c));
            ++made;
          }
        }
    }
  }
  return out;
}

}  // namespace ts::lower

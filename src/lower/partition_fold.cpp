#include "tilesweep/lower/partition_fold.h"

#include <algorithm>
#include <numeric>

#include "tilesweep/base/error.h"
#include "tilesweep/ir/graph_edit.h"
#include "tilesweep/ir/interpreter.h"
#include "tilesweep/lower/frame.h"
#include "tilesweep/lower/index_source.h"
#include "tilesweep/lower/tile_op.h"

namespace ts::lower {

namespace {

using Shape = std::vector<std::int64_t>;

std::vector<std::int64_t> bounds(const ir::Node& n, const char* name, const sem::DimEnv& dims) {
  std::vector<std::int64_t> out;
  for (const auto& d : std::get<std::vector<sem::Dim>>(n.attrs.at(name)))
    out.push_back(d.evaluate(dims).value());
  return out;
}

// A slice of whole rows, step 1.
bool row_slice(const ir::Node& n, const Shape& in, const sem::DimEnv& dims) {
  auto begin = bounds(n, "begin", dims), end = bounds(n, "end", dims),
       step = bounds(n, "step", dims);
  return in.size() == 2 && step == std::vector<std::int64_t>{1, 1} && begin[1] == 0 &&
         end[1] == in[1];
}

// Whether node `i` is a value fold_partitions can fold; its rows, when it is a computed one, go
// into `rows`.
bool foldable(const ir::Kernel& k, int i, const std::vector<Shape>& shapes, const sem::DimEnv& dims,
              std::vector<std::int64_t>& rows) {
  const ir::Node& n = k.nodes[static_cast<std::size_t>(i)];
  const Shape& s = shapes[static_cast<std::size_t>(i)];
  auto in = [&](std::size_t j) -> const Shape& {
    return shapes[static_cast<std::size_t>(n.inputs[j])];
  };
  switch (classify(n)) {
    case OpClass::Input:
      return s.empty() || s.size() == 2;
    case OpClass::Constant:
      return s.empty();
    case OpClass::Layout:
      if (n.op == "slice") return row_slice(n, in(0), dims);
      return n.op == "concat" && std::get<std::int64_t>(n.attrs.at("axis")) == 0 && s.size() == 2;
    case OpClass::Compute:
      break;
  }
  if (is_constant(k, i)) return s.empty();
  if (!folds_elementwise(k, i) || s.size() != 2) return false;
  for (std::size_t j = 0; j < n.inputs.size(); ++j)
    if (!in(j).empty() && in(j) != s) return false;
  rows.push_back(s[0]);
  return true;
}

sem::Dim dim(std::int64_t v) { return sem::Dim(v); }

struct Folder {
  const ir::Kernel& k;
  const std::vector<Shape>& shapes;
  const sem::DimEnv& dims;
  std::int64_t f;
  FoldForm form;
  ir::Kernel out;
  std::vector<int> map;

  std::vector<sem::Dim> folded(const Shape& s) const { return {dim(s[0] * f), dim(s[1] / f)}; }

  int reshape(int node, std::vector<sem::Dim> shape) {
    const sem::OpSpec* spec = sem::OpTable::builtin().find("reshape");
    return ir::add_op(out, *spec, {node}, {{"shape", std::move(shape)}}, {});
  }

  void input(int i) {
    ir::Node n = k.nodes[static_cast<std::size_t>(i)];
    const Shape& s = shapes[static_cast<std::size_t>(i)];
    out.params[static_cast<std::size_t>(n.param)].node = static_cast<int>(out.nodes.size());
    if (s.empty() || form == FoldForm::Proof) {
      out.nodes.push_back(n);
      map.push_back(static_cast<int>(out.nodes.size()) - 1);
      if (!s.empty()) map.back() = reshape(map.back(), folded(s));
      return;
    }
    n.shape = folded(s);
    out.nodes.push_back(std::move(n));
    map.push_back(static_cast<int>(out.nodes.size()) - 1);
  }

  void op(int i) {
    const ir::Node& n = k.nodes[static_cast<std::size_t>(i)];
    if (n.inputs.empty()) {  // a literal: as it is
      out.nodes.push_back(n);
      map.push_back(static_cast<int>(out.nodes.size()) - 1);
      return;
    }
    sem::AttrMap attrs = n.attrs;
    if (n.op == "slice") {
      auto begin = bounds(n, "begin", dims), end = bounds(n, "end", dims);
      const Shape& in = shapes[static_cast<std::size_t>(n.inputs[0])];
      attrs["begin"] = std::vector<sem::Dim>{dim(begin[0] * f), dim(0)};
      attrs["end"] = std::vector<sem::Dim>{dim(end[0] * f), dim(in[1] / f)};
      attrs["step"] = std::vector<sem::Dim>{dim(1), dim(1)};
    }
    std::vector<int> inputs;
    for (int x : n.inputs) inputs.push_back(map[static_cast<std::size_t>(x)]);
    int id = ir::add_op(out, *n.spec, inputs, attrs, n.loc);
    ir::Node& made = out.nodes[static_cast<std::size_t>(id)];
    made.origin = n.origin;
    made.label = n.label;
    made.weak = n.weak;
    map.push_back(id);
  }

  ir::Kernel run() {
    out.name = k.name;
    out.loc = k.loc;
    out.params = k.params;
    out.dims = k.dims;
    out.preconditions = k.preconditions;
    for (std::size_t i = 0; i < k.nodes.size(); ++i)
      classify(k.nodes[i]) == OpClass::Input ? input(static_cast<int>(i)) : op(static_cast<int>(i));
    for (int o : k.outputs) {
      const Shape& s = shapes[static_cast<std::size_t>(o)];
      int v = map[static_cast<std::size_t>(o)];
      out.outputs.push_back(s.empty() ? v : reshape(v, {dim(s[0]), dim(s[1])}));
    }
    return std::move(out);
  }
};

}  // namespace

bool folds_elementwise(const ir::Kernel& k, int node) {
  const ir::Node& n = k.nodes[static_cast<std::size_t>(node)];
  if (classify(n) != OpClass::Compute || !n.spec || is_matmul(n) || !n.spec->contract.empty() ||
      n.inputs.empty() || is_index_source(n) || reads_positions(k, node) || is_position(k, node))
    return false;
  for (const char* a : {"axis", "axes", "shape"})
    if (n.attrs.count(a)) return false;
  return true;
}

std::optional<ir::Kernel> fold_partitions(const ir::Kernel& k, const sem::DimEnv& dims,
                                          int partitions, FoldForm form) {
  std::vector<Shape> shapes;
  std::vector<std::int64_t> rows;
  try {
    for (const auto& n : k.nodes) shapes.push_back(ir::concrete_shape(n.shape, dims));
    for (std::size_t i = 0; i < k.nodes.size(); ++i)
      if (!foldable(k, static_cast<int>(i), shapes, dims, rows)) return std::nullopt;
  } catch (const UserError&) {
    return std::nullopt;  // a dim the shapes need is not bound
  }
  if (rows.empty()) return std::nullopt;
  // The least factor that makes every computed value's rows a multiple of the partitions.
  std::int64_t g = partitions;
  for (std::int64_t r : rows) g = std::gcd(g, r);
  std::int64_t f = partitions / g;
  if (f == 1) return std::nullopt;
  for (const auto& s : shapes)
    if (s.size() == 2 && s[1] % f != 0) return std::nullopt;
  try {
    return Folder{k, shapes, dims, f, form, {}, {}}.run();
  } catch (const UserError&) {
    return std::nullopt;  // the op semantics reject a folded operand
  }
}

}  // namespace ts::lower

#include "tilesweep/lower/row_step_fold.h"

#include <algorithm>
#include <map>

#include "tilesweep/base/error.h"
#include "tilesweep/ir/graph_edit.h"
#include "tilesweep/ir/interpreter.h"
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

sem::Dim dim(std::int64_t v) { return sem::Dim(v); }

// The row step of input `i` when every reader is a slice stepping along its rows by the same
// s > 1 that divides them (its column steps >= 1, its bounds inside the input); 0 otherwise.
std::int64_t row_step(const ir::Kernel& k, int i, const std::vector<Shape>& shapes,
                      const sem::DimEnv& dims) {
  const Shape& s = shapes[static_cast<std::size_t>(i)];
  if (s.size() != 2) return 0;
  for (int o : k.outputs)
    if (o == i) return 0;
  std::int64_t step = 0;
  for (const auto& n : k.nodes) {
    if (std::count(n.inputs.begin(), n.inputs.end(), i) == 0) continue;
    if (n.op != "slice") return 0;
    auto begin = bounds(n, "begin", dims), end = bounds(n, "end", dims),
         by = bounds(n, "step", dims);
    if (by[0] <= 1 || by[1] < 1 || (step && by[0] != step) || s[0] % by[0] != 0) return 0;
    for (std::size_t d = 0; d < 2; ++d)
      if (begin[d] < 0 || end[d] > s[d] || begin[d] >= end[d]) return 0;
    step = by[0];
  }
  return step;
}

struct Folder {
  const ir::Kernel& k;
  const std::vector<Shape>& shapes;
  const sem::DimEnv& dims;
  const std::map<int, std::int64_t>& steps;  // folded input -> its row step
  FoldForm form;
  ir::Kernel out;
  std::vector<int> map;

  std::vector<sem::Dim> folded(int input) const {
    const Shape& s = shapes[static_cast<std::size_t>(input)];
    std::int64_t f = steps.at(input);
    return {dim(s[0] / f), dim(s[1] * f)};
  }

  void input(int i) {
    ir::Node n = k.nodes[static_cast<std::size_t>(i)];
    out.params[static_cast<std::size_t>(n.param)].node = static_cast<int>(out.nodes.size());
    bool folds = steps.count(i) > 0;
    if (folds && form == FoldForm::Lowering) n.shape = folded(i);
    out.nodes.push_back(std::move(n));
    map.push_back(static_cast<int>(out.nodes.size()) - 1);
    if (folds && form == FoldForm::Proof) {
      const sem::OpSpec* spec = sem::OpTable::builtin().find("reshape");
      map.back() = ir::add_op(out, *spec, {map.back()}, {{"shape", folded(i)}}, {});
    }
  }

  // A slice of a folded input: the same elements of the folded view.
  sem::AttrMap folded_slice(const ir::Node& n, int input) const {
    std::int64_t f = steps.at(input), cols = shapes[static_cast<std::size_t>(input)][1];
    auto begin = bounds(n, "begin", dims), end = bounds(n, "end", dims),
         by = bounds(n, "step", dims);
    std::int64_t rows = (end[0] - begin[0] + f - 1) / f, first = begin[0] / f,
                 skew = begin[0] % f * cols;
    sem::AttrMap attrs = n.attrs;
    attrs["begin"] = std::vector<sem::Dim>{dim(first), dim(skew + begin[1])};
    attrs["end"] = std::vector<sem::Dim>{dim(first + rows), dim(skew + end[1])};
    attrs["step"] = std::vector<sem::Dim>{dim(1), dim(by[1])};
    return attrs;
  }

  void op(int i) {
    const ir::Node& n = k.nodes[static_cast<std::size_t>(i)];
    if (n.inputs.empty()) {  // a literal: as it is
      out.nodes.push_back(n);
      map.push_back(static_cast<int>(out.nodes.size()) - 1);
      return;
    }
    sem::AttrMap attrs =
        n.op == "slice" && steps.count(n.inputs[0]) ? folded_slice(n, n.inputs[0]) : n.attrs;
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
    for (int o : k.outputs) out.outputs.push_back(map[static_cast<std::size_t>(o)]);
    return std::move(out);
  }
};

}  // namespace

std::optional<ir::Kernel> fold_row_steps(const ir::Kernel& k, const sem::DimEnv& dims,
                                         FoldForm form) {
  std::vector<Shape> shapes;
  std::map<int, std::int64_t> steps;
  try {
    for (const auto& n : k.nodes) shapes.push_back(ir::concrete_shape(n.shape, dims));
    for (std::size_t i = 0; i < k.nodes.size(); ++i)
      if (classify(k.nodes[i]) == OpClass::Input)
        if (std::int64_t s = row_step(k, static_cast<int>(i), shapes, dims))
          steps[static_cast<int>(i)] = s;
  } catch (const UserError&) {
    return std::nullopt;  // a dim the shapes need is not bound
  } catch (const std::bad_optional_access&) {
    return std::nullopt;  // a slice bound the dims do not decide
  }
  if (steps.empty()) return std::nullopt;
  try {
    return Folder{k, shapes, dims, steps, form, {}, {}}.run();
  } catch (const UserError&) {
    return std::nullopt;  // the op semantics reject a folded operand
  }
}

}  // namespace ts::lower

// Pass 1 of materialization (contract): kernel, dims and fusion groups in; the Prefix out —
// every node's concrete shape and frame, its folded value if it is constant, and its HBM view if
// it lives in HBM: kernel inputs and outputs and every value one group hands to another get an
// HBM tensor; layout ops (transpose, slice, broadcast_to, repeat, reshape) become views of their
// operand's tensor, no data moved; an output that is a layout op no in-place placement stores is
// copied through its view into a tensor of its own (Prefix::copies, output_copy.cpp). NoProgram
// for a layout op no DMA access pattern expresses.
// Depends on no candidate choice (instructions, tilings, engines).
#include <fmt/format.h>

#include <algorithm>

#include "emission.h"
#include "tilesweep/ir/interpreter.h"
#include "tilesweep/lower/index_source.h"
#include "tilesweep/lower/tile_op.h"

namespace ts::lower {

namespace {

struct HbmLayout {
  const ir::Kernel& kernel;
  const sem::DimEnv& dims;
  Prefix& prefix;

  std::optional<HbmView>& view(int node) { return prefix.views[static_cast<std::size_t>(node)]; }
  const std::vector<std::int64_t>& shape(int node) const {
    return prefix.shapes[static_cast<std::size_t>(node)];
  }

  int output_index(int node) const {
    for (std::size_t o = 0; o < kernel.outputs.size(); ++o)
      if (kernel.outputs[o] == node) return static_cast<int>(o);
    return -1;
  }

  HbmView add_tensor(const std::string& name, int node, int param, int output) {
    Buffer b;
    b.name = name.empty() ? "t" + std::to_string(node) : name;
    b.memory = sem::Memory::Hbm;
    b.dtype = kernel.nodes[node].dtype;
    b.shape = shape(node);
    b.param = param;
    b.output = output;
    prefix.program.buffers.push_back(std::move(b));
    return identity_view(prefix.program, static_cast<int>(prefix.program.buffers.size()) - 1);
  }

  // Whether a node other than `except` reads `value`.
  bool read_elsewhere(int value, const ir::Node& except) const {
    for (const auto& m : kernel.nodes)
      for (int x : m.inputs)
        if (x == value && &m != &except) return true;
    return false;
  }

  // A kernel input whose node has another shape than its parameter (partition_fold.h): the HBM
  // tensor has the parameter's shape, the node reads it through a reshaped alias.
  HbmView add_input(int id) {
    const ir::Node& node = kernel.nodes[id];
    auto declared =
        ir::concrete_shape(kernel.params[static_cast<std::size_t>(node.param)].shape, dims);
    if (declared == shape(id)) return add_tensor(node.label, id, node.param, -1);
    std::swap(prefix.shapes[static_cast<std::size_t>(id)], declared);
    HbmView whole = add_tensor(node.label, id, node.param, -1);
    std::swap(prefix.shapes[static_cast<std::size_t>(id)], declared);
    return alias(whole, shape(id));
  }

  // An output that is a reshape (a folded kernel's output, partition_fold.h) or a transpose (halves
  // computed per head as [H, T, D], the output [T, H, D]) of a concat of computed values that
  // nothing else reads: the concat is placed in a reshaped alias or the transposed view of the
  // output's tensor (concat_in_place then writes its parts into it), no copy.
  void layout_of_concat_in_place(int id) {
    const ir::Node& n = kernel.nodes[id];
    int in = n.inputs[0];
    if (kernel.nodes[in].op != "concat" || !parts_in_place(in) || output_index(in) >= 0 ||
        read_elsewhere(in, n) || view(in) || output_index(id) < 0)
      return;
    view(id) = output_tensor(id);
    view(in) = n.op == "reshape" ? alias(*view(id), shape(in)) : transposed(n, *view(id));
  }

  // Whether the operands of concat `id` are computed values nothing else reads.
  bool parts_in_place(int id) const {
    const ir::Node& n = kernel.nodes[id];
    for (int in : n.inputs)
      if (classify(kernel.nodes[in]) != OpClass::Compute || is_constant(kernel, in) ||
          output_index(in) >= 0 || read_elsewhere(in, n))
        return false;
    return true;
  }

  // A concat of computed values that nothing else reads: its operands are written straight into
  // their parts of the concat's HBM tensor (their views are slices of it), no copy.
  void concat_in_place(int id) {
    const ir::Node& n = kernel.nodes[id];
    if (!parts_in_place(id)) return;
    auto axis = static_cast<std::size_t>(std::get<std::int64_t>(n.attrs.at("axis")));
    if (!view(id))  // else the reshaped alias of an output (reshape_of_concat_in_place)
      view(id) = add_tensor(n.label.empty() ? "concat" + std::to_string(id) : n.label, id, -1,
                            output_index(id));
    std::int64_t offset = 0;
    for (int in : n.inputs) {
      HbmView part = *view(id);
      part.dims[axis].offset = offset;
      view(in) = part;
      offset += shape(in)[axis];
    }
  }

  // Whether computed value `in` is read only by layout op `id`, which is a kernel output that
  // nothing reads: `in` can then be stored straight through a view of the output's tensor.
  bool only_stored_through(int id, int in) const {
    if (classify(kernel.nodes[in]) != OpClass::Compute || is_constant(kernel, in) ||
        output_index(in) >= 0 || prefix.views[in] || output_index(id) < 0)
      return false;
    for (const auto& m : kernel.nodes)
      for (int x : m.inputs)
        if ((x == in && &m != &kernel.nodes[id]) || x == id) return false;
    return true;
  }

  HbmView output_tensor(int id) {
    const ir::Node& n = kernel.nodes[id];
    return add_tensor(n.label.empty() ? n.op + std::to_string(id) : n.label, id, -1,
                      output_index(id));
  }

  // A transposed computed value that is only a kernel output: the value is stored straight
  // through the transposed view of the output's HBM tensor (a permuting DMA store), no copy.
  void transpose_in_place(int id) {
    const ir::Node& n = kernel.nodes[id];
    int in = n.inputs[0];
    if (!only_stored_through(id, in)) return;
    view(id) = output_tensor(id);
    view(in) = transposed(n, *view(id));
  }

  // The view of transpose `n`'s operand inside `out`, the view of its result.
  static HbmView transposed(const ir::Node& n, const HbmView& out) {
    const auto& axes = std::get<std::vector<sem::Dim>>(n.attrs.at("axes"));
    HbmView v = out;
    for (std::size_t d = 0; d < axes.size(); ++d)
      v.dims[static_cast<std::size_t>(axes[d].value())] = out.dims[d];
    return v;
  }

  // A reshaped computed value that is only a kernel output (heads [T, H * D] viewed as
  // [T, H, D]): the value is stored into the output's HBM tensor through an alias in the value's
  // shape (the row-major bytes are the same), no copy.
  void reshape_in_place(int id) {
    int in = kernel.nodes[id].inputs[0];
    if (!only_stored_through(id, in)) return;
    view(id) = output_tensor(id);
    view(in) = alias(*view(id), shape(in));
  }

  // The values that live in HBM: the outputs and what one group hands to another.
  Lowered<std::vector<bool>> in_hbm() const {
    std::size_t n = kernel.nodes.size();
    std::vector<bool> hbm(n, false);
    for (int o : kernel.outputs) {
      OpClass c = classify(kernel.nodes[o]);
      if (c == OpClass::Layout && !prefix.views[o] && !is_constant(kernel, o))
        continue;  // copied (copy_output)
      if (c != OpClass::Compute && !prefix.views[o])
        return NoProgram{fmt::format("output {} is a '{}', not a computed value", output_index(o),
                                     kernel.nodes[o].op)};
      if (is_position(kernel, o))
        return NoProgram{
            fmt::format("output {} is a mask ('{}' of positions), computed only "
                        "inside the ops that read it",
                        output_index(o), kernel.nodes[o].op)};
      hbm[o] = true;
    }
    for (std::size_t i = 0; i < n; ++i)
      for (int in : kernel.nodes[i].inputs)
        if (prefix.group_of[in] >= 0 && prefix.group_of[in] != prefix.group_of[i]) hbm[in] = true;
    return hbm;
  }

  void shapes_and_frames(const std::vector<std::vector<int>>& groups) {
    std::size_t n = kernel.nodes.size();
    prefix.shapes.resize(n);
    prefix.views.resize(n);
    prefix.consts.resize(n);
    prefix.group_of.assign(n, -1);
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (int m : groups[g]) prefix.group_of[m] = static_cast<int>(g);
    for (std::size_t i = 0; i < n; ++i)
      prefix.shapes[i] = ir::concrete_shape(kernel.nodes[i].shape, dims);
    prefix.frames.assign(n, Frame{-1, -1, -1});
    for (std::size_t i = 0; i < n; ++i)
      if (auto frame = find_frame(kernel, static_cast<int>(i))) prefix.frames[i] = *frame;
    node_facts();
  }

  void node_facts() {
    std::size_t n = kernel.nodes.size();
    prefix.roles.assign(n, {});
    prefix.reduces_rows.assign(n, 0);
    prefix.has_axis.assign(n, 0);
    prefix.reads_mask.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const int node = static_cast<int>(i);
      prefix.reads_mask[i] = reads_positions(kernel, node);
      prefix.reduces_rows[i] = reduces_rows(kernel, node);
      prefix.has_axis[i] = kernel.nodes[i].attrs.count("axis") > 0;
      if (prefix.frames[i].rank < 0) continue;  // operand_role needs the node's frame
      for (std::size_t j = 0; j < kernel.nodes[i].inputs.size(); ++j)
        prefix.roles[i].push_back(operand_role(kernel, node, static_cast<int>(j)));
    }
  }

  std::optional<NoProgram> place_values() {
    std::size_t n = kernel.nodes.size();
    for (int o : kernel.outputs)
      if (kernel.nodes[o].op == "reshape" || kernel.nodes[o].op == "transpose")
        layout_of_concat_in_place(o);
    for (std::size_t i = 0; i < n; ++i)
      if (kernel.nodes[i].op == "concat")
        concat_in_place(static_cast<int>(i));
      else if (kernel.nodes[i].op == "transpose")
        transpose_in_place(static_cast<int>(i));
      else if (kernel.nodes[i].op == "reshape")
        reshape_in_place(static_cast<int>(i));
    Lowered<std::vector<bool>> hbm = in_hbm();
    if (!hbm) return hbm.no_program();
    for (std::size_t i = 0; i < n; ++i) {
      const ir::Node& node = kernel.nodes[i];
      int id = static_cast<int>(i);
      OpClass c = classify(node);
      if (prefix.views[i]) continue;  // placed by concat_, transpose_ or reshape_in_place
      if (c == OpClass::Input)
        prefix.views[i] = add_input(id);
      else if (c == OpClass::Constant)
        prefix.consts[i] = constant_value(node, dims);
      else if (is_constant(kernel, id)) {
        Lowered<double> value = fold_constant(kernel, id, prefix.consts, dims);
        if (!value) return value.no_program();
        prefix.consts[i] = *value;
      } else if (c == OpClass::Layout) {
        std::optional<NoProgram> no = layout_view(id);
        if (output_index(id) >= 0) no = copy_output(id, std::move(no));
        if (no) return no;
      } else if ((*hbm)[i]) {
        prefix.views[i] = add_tensor(node.label.empty() ? node.op + std::to_string(i) : node.label,
                                     id, -1, output_index(id));
      }
    }
    return std::nullopt;
  }

  // Output `id`, a layout op that no in-place pass placed (a slice; a view of a value other ops
  // also read): copied after the groups' nests (Prefix::copies) from its view of the operand's
  // tensor into a tensor of its own. A reshape of a strided view (a slice's, which `view_failed`
  // says has no reshaped view) that nothing reads is copied from its operand's view into an
  // alias of its tensor in the operand's shape (the row-major bytes are the same).
  std::optional<NoProgram> copy_output(int id, std::optional<NoProgram> view_failed) {
    const ir::Node& n = kernel.nodes[id];
    if (prefix.consts[id])
      return NoProgram{fmt::format("output {} is a '{}' of a constant", output_index(id), n.op)};
    int in = n.inputs[0];
    bool read = std::any_of(kernel.nodes.begin(), kernel.nodes.end(), [&](const ir::Node& m) {
      return std::count(m.inputs.begin(), m.inputs.end(), id) > 0;
    });
    if (view_failed && (n.op != "reshape" || !view(in) || read)) return view_failed;
    HbmView out = output_tensor(id);
    if (view_failed)
      prefix.copies.push_back({id, *view(in), alias(out, shape(in)), shape(in)});
    else
      prefix.copies.push_back({id, *view(id), out, shape(id)});
    return std::nullopt;
  }

  std::optional<NoProgram> layout_view(int id);
  Lowered<HbmView> slice_view(const ir::Node& n, HbmView v) const;
  HbmView broadcast_view(int id, const HbmView& v) const;
  Lowered<HbmView> reshape_view(int id, const HbmView& v);
  HbmView alias(const HbmView& v, const std::vector<std::int64_t>& shape);
};

// The view of layout op `id` over its operand's view (or its folded value).
std::optional<NoProgram> HbmLayout::layout_view(int id) {
  const ir::Node& n = kernel.nodes[id];
  int in = n.inputs[0];
  if (prefix.consts[in]) {
    prefix.consts[id] = prefix.consts[in];
    return std::nullopt;
  }
  if (!view(in))
    return NoProgram{fmt::format(
        "'{}' of a value computed on chip: layout ops apply to kernel inputs so far", n.op)};
  HbmView v = *view(in);
  Lowered<HbmView> result = v;
  if (n.op == "transpose") {
    const auto& axes = std::get<std::vector<sem::Dim>>(n.attrs.at("axes"));
    for (std::size_t d = 0; d < axes.size(); ++d) result->dims[d] = v.dims[axes[d].value()];
  } else if (n.op == "slice") {
    result = slice_view(n, v);
  } else if (n.op == "broadcast_to") {
    result = broadcast_view(id, v);
  } else if (n.op == "reshape") {
    result = reshape_view(id, v);
  } else if (n.op == "repeat") {
    // (floor((phase + floor(i / r2)) / r) = floor((phase * r2 + i) / (r * r2)))
    auto axis = static_cast<std::size_t>(std::get<std::int64_t>(n.attrs.at("axis")));
    std::int64_t r2 = std::get<sem::Dim>(n.attrs.at("repeats")).evaluate(dims).value();
    result->dims[axis].repeat *= r2;
    result->dims[axis].phase *= r2;
  } else {
    return NoProgram{fmt::format("'{}' has no DMA access pattern yet", n.op)};
  }
  if (!result) return result.no_program();
  view(id) = *result;
  return std::nullopt;
}

Lowered<HbmView> HbmLayout::slice_view(const ir::Node& n, HbmView v) const {
  auto bound = [&](const char* name, std::size_t d) {
    return std::get<std::vector<sem::Dim>>(n.attrs.at(name))[d].evaluate(dims).value();
  };
  for (std::size_t d = 0; d < v.dims.size(); ++d) {
    HbmDim& x = v.dims[d];
    std::int64_t begin = bound("begin", d), step = bound("step", d);
    if (x.repeat > 1) {
      // Element i: offset + stride * ((phase + begin + i * step) // repeat).
      std::int64_t at = x.phase + begin;
      if (step == 1) {  // the same groups, from inside one: a phase
        x.offset += x.stride * (at / x.repeat);
        x.phase = at % x.repeat;
      } else if (step % x.repeat == 0) {  // one element per group: a plain strided dim
        x.offset += x.stride * (at / x.repeat);
        x.stride *= step / x.repeat;
        x.repeat = 1;
        x.phase = 0;
      } else {
        return NoProgram{fmt::format(
            "a slice stepping {} along a dim repeated {} times has no DMA access pattern (the "
            "step must be 1 or a multiple of the repeat count)",
            step, x.repeat)};
      }
      continue;
    }
    x.offset += x.stride * begin;
    x.stride *= step;
  }
  return v;
}

HbmView HbmLayout::broadcast_view(int id, const HbmView& v) const {
  const auto& in_shape = shape(kernel.nodes[id].inputs[0]);
  const auto& out_shape = shape(id);
  HbmView b = v;
  b.dims.clear();
  std::size_t lead = out_shape.size() - in_shape.size();
  for (std::size_t d = 0; d < out_shape.size(); ++d) {
    if (d < lead) {
      b.dims.push_back({-1, 0, 1, true});
      continue;
    }
    HbmDim x = v.dims[d - lead];
    if (in_shape[d - lead] == 1 && out_shape[d] != 1) x.broadcast = true;
    b.dims.push_back(x);
  }
  return b;
}

bool is_identity(const HbmView& v, const Program& p) {
  if (v.dims.size() != p.buffers[v.buffer].shape.size()) return false;
  for (std::size_t d = 0; d < v.dims.size(); ++d)
    if (v.dims[d].base != static_cast<int>(d) || v.dims[d].offset || v.dims[d].stride != 1 ||
        v.dims[d].broadcast || v.dims[d].repeat != 1)
      return false;
  return true;
}

// A contiguous reshape: a buffer aliasing the operand's storage in the new shape. (A slice's view
// from the first element on is an identity view of fewer elements: not the whole storage.)
Lowered<HbmView> HbmLayout::reshape_view(int id, const HbmView& v) {
  if (!is_identity(v, prefix.program) ||
      shape(kernel.nodes[id].inputs[0]) != prefix.program.buffers[v.buffer].shape)
    return NoProgram{"reshape of a strided or transposed view"};
  return alias(v, shape(id));
}

// A buffer aliasing the storage of identity view `v` in `shape` (same element count, row-major).
HbmView HbmLayout::alias(const HbmView& v, const std::vector<std::int64_t>& shape) {
  Buffer b = prefix.program.buffers[v.buffer];
  b.name += "_r";
  b.shape = shape;
  b.alias = b.alias >= 0 ? b.alias : v.buffer;
  b.param = -1;
  b.output = -1;
  prefix.program.buffers.push_back(std::move(b));
  return identity_view(prefix.program, static_cast<int>(prefix.program.buffers.size()) - 1);
}

}  // namespace

Lowered<Prefix> lay_out_hbm(const ir::Kernel& k, const sem::DimEnv& dims,
                            const std::vector<std::vector<int>>& groups) {
  Prefix prefix;
  prefix.program.kernel = k.name;
  prefix.program.blocks.push_back(Block{});
  HbmLayout layout{k, dims, prefix};
  layout.shapes_and_frames(groups);
  if (auto no = layout.place_values()) return *no;
  return prefix;
}

const PreparedLowering* Prefix::lowering(const ir::Kernel* program) const {
  auto it = std::lower_bound(lowerings.begin(), lowerings.end(), program,
                             [](const auto& e, const ir::Kernel* k) { return e.first < k; });
  return it != lowerings.end() && it->first == program ? &it->second : nullptr;
}

}  // namespace ts::lower

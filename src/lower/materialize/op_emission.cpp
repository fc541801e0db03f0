// Op emission (contract): one kernel op, given its operand tiles, becomes the instructions of its
// picked lowering program (or another program of its pick: a transposed producer's pre), in
// program order at the end of `block`. Constants become constant tiles, operands an instruction
// cannot read where they are are copied to SBUF, the root instruction writes `dest` when its
// memory allows (else a copy follows; a tile just loaded is loaded into `dest` instead) and
// accumulates over `accumulate`'s iterations. Returns the
// result's tile, or NoProgram when the target lacks an instruction of the program.
#include <fmt/format.h>

#include <algorithm>

#include "emission.h"
#include "tilesweep/lower/index_source.h"
#include "tilesweep/lower/split_reduction.h"

namespace ts::lower {

namespace {

// The prepared form of a lowering program: the prefix's, or prepared here once.
const PreparedLowering& prepared(Emission& e, const ir::Kernel& lowering) {
  if (const PreparedLowering* p = e.prefix.lowering(&lowering)) return *p;
  for (const auto& [program, p] : e.local_lowerings)
    if (program == &lowering) return p;
  return e.local_lowerings.emplace_back(&lowering, prepare_lowering(lowering, e.target.isa)).second;
}

// The concrete shapes of a lowering program's nodes on given operand tiles: from the prepared
// extents, or (where they leave a dim open) evaluated from the dims the operands bind.
class LoweringShapes {
 public:
  LoweringShapes(const ir::Kernel& lowering, const PreparedLowering& prepared,
                 const std::vector<Tile>& operands)
      : lowering_(lowering), prepared_(prepared), operands_(operands) {}

  // An extent's size, if the operand has that dim (else the bound dims decide, as they did).
  std::optional<std::int64_t> size_of(const Extent& e) const {
    if (e.operand < 0) return e.value;
    const Shape& s = operands_.at(static_cast<std::size_t>(e.operand)).shape;
    if (static_cast<std::size_t>(e.dim) < s.size()) return s[static_cast<std::size_t>(e.dim)];
    return std::nullopt;
  }

  Shape shape_of(std::size_t node) {
    const LoweringNode& step = prepared_.nodes[node];
    Shape s;
    if (step.resolved) {
      for (const Extent& e : step.shape) {
        auto size = size_of(e);
        if (!size) break;
        s.push_back(*size);
      }
      if (s.size() == step.shape.size()) return s;
    }
    auto v = ir::concrete_shape(lowering_.nodes[node].shape, bound());
    return Shape(v.begin(), v.end());
  }

  // The dims bound by the operands' shapes (the pattern dims that are a bare symbol).
  const sem::DimEnv& bound() {
    if (!bound_) {
      bound_.emplace();
      for (std::size_t i = 0; i < lowering_.params.size(); ++i) {
        const auto& pattern = lowering_.params[i].shape;
        const Shape& shape = operands_.at(i).shape;
        for (std::size_t d = 0; d < pattern.size() && d < shape.size(); ++d)
          if (bare_symbol(pattern[d])) (*bound_)[pattern[d].key()] = shape[d];
      }
    }
    return *bound_;
  }

 private:
  const ir::Kernel& lowering_;
  const PreparedLowering& prepared_;
  const std::vector<Tile>& operands_;
  std::optional<sem::DimEnv> bound_;
};

// An attribute that is a dim expression over a mask's tile origins (index_source.h: I and J,
// each the origin plus 1), e.g. affine_select's offset I - J, made an integer plus loop terms
// from where the tile starts: a + b (I - 1) + c (J - 1) at I - 1 = row start, J - 1 = column
// start. NoProgram where the expression is not affine in the origins or the tile's origin is
// unknown here.
std::optional<NoProgram> place_moving_attrs(const Emission& e, Inst& in) {
  for (auto& [name, value] : in.attrs) {
    const auto* d = std::get_if<sem::Dim>(&value);
    if (!d || d->is_const()) continue;
    auto at = [&](std::int64_t i, std::int64_t j) {
      return d->evaluate({{kRowOrigin, i + 1}, {kColOrigin, j + 1}});
    };
    auto c = at(0, 0), r = at(1, 0), k = at(0, 1), check = at(3, 5);
    if (!c || !r || !k || !check || *check != *c + 3 * (*r - *c) + 5 * (*k - *c))
      return NoProgram{fmt::format("'{}' of {} is not affine in a tile's origin: {}", name,
                                   in.spec->op.name, d->str())};
    if (!e.origin || !in.moving_attr.empty())
      return NoProgram{
          fmt::format("{} needs its tile's position, which is not known here", in.spec->op.name)};
    in.moving_attr = name;
    in.moving.clear();
    for (auto [terms, scale] : {std::pair{&e.origin->first, *r - *c}, {&e.origin->second, *k - *c}})
      for (auto [block, step] : *terms)
        if (block >= 0 && step * scale != 0) in.moving.push_back({block, step * scale});
    value = *c;
  }
  return std::nullopt;
}

// One op's lowering program being emitted, node by node.
struct OpEmission {
  Emission& e;
  int block, node;
  const std::vector<Tile>& operands;
  const Tile* dest;
  int accumulate;
  Depth depth;
  const ir::Kernel& lowering;
  const PreparedLowering& prepared;
  LoweringShapes shapes{lowering, prepared, operands};
  std::vector<std::optional<Tile>> tiles = std::vector<std::optional<Tile>>(lowering.nodes.size());
  std::vector<std::optional<double>> constants =
      std::vector<std::optional<double>>(lowering.nodes.size());
  ir::DType dtype = e.kernel.nodes[node].dtype;
  int root = lowering.outputs[0];

  std::optional<NoProgram> emit_step(std::size_t m) {
    const ir::Node& step = lowering.nodes[m];
    const LoweringNode& info = prepared.nodes[m];
    if (info.kind == LoweringNode::Operand) {
      tiles[m] = operands[step.param];
    } else if (info.kind == LoweringNode::Constant && info.reciprocal) {
      constants[m] = 1.0 / constants[step.inputs[0]].value();
    } else if (info.kind == LoweringNode::Constant) {
      std::optional<std::int64_t> dim =
          info.value_dim ? shapes.size_of(*info.value_dim) : std::nullopt;
      constants[m] = info.value ? *info.value
                     : dim      ? static_cast<double>(*dim)
                                : constant_value(step, shapes.bound());
    } else if (info.kind == LoweringNode::ConstantLayout) {
      Shape shape = shapes.shape_of(m);
      Lowered<int> buffer = constant_tile(e, *constants[step.inputs[0]], shape, dtype);
      if (!buffer) return buffer.no_program();
      tiles[m] = Tile{*buffer, {}, shape};
    } else {
      if (!info.spec)
        return NoProgram{
            fmt::format("'{}' in a lowering is not an instruction of {}", step.op, e.target.name)};
      Lowered<bool> fused = fuse_dma_transpose(e, info.spec, step, tiles, m);
      if (!fused) return fused.no_program();
      if (!*fused) return emit_instruction(m, info.spec);
    }
    return std::nullopt;
  }

  // Operand `j` of instruction `spec`, lowering node `source`: a constant made a tile where it
  // is read, copied to a memory the instruction reads.
  Lowered<Tile> operand(int source, const sem::InstrSpec* spec, std::size_t j) {
    auto& tile = tiles[static_cast<std::size_t>(source)];
    if (!tile) {
      Shape shape = shapes.shape_of(static_cast<std::size_t>(source));
      if (shape.empty()) shape = {operands.front().shape.front(), 1};
      Lowered<int> buffer =
          constant_tile(e, constants[static_cast<std::size_t>(source)].value(), shape, dtype);
      if (!buffer) return buffer.no_program();
      tile = Tile{*buffer, {}, shape};
    }
    return ensure_memory(e, block, *tile, &spec->operand_memory[j], node, dtype);
  }

  std::optional<NoProgram> emit_instruction(std::size_t m, const sem::InstrSpec* spec);

  // The reducer of the op where its lowering is this one instruction on the op's own operand
  // (the root reads parameter 0 first, constants besides) and the op reduces that operand's free
  // axis as it is: then the instruction computes that reduction of its operand 0 (the synthesis
  // proof). None for a pair's or a region's lowering (its parameters are other ops' operands)
  // and for any other program of the pick.
  std::optional<sem::Reducer> reduces_operand(const ir::Node& step) const {
    if (&lowering != e.plan.picks.at(node).lowering || e.plan.fused_operands.count(node))
      return std::nullopt;
    for (const auto& [producer, consumer] : e.plan.absorbed)
      if (consumer == node) return std::nullopt;
    for (std::size_t j = 0; j < step.inputs.size(); ++j) {
      const LoweringNode& in = prepared.nodes[static_cast<std::size_t>(step.inputs[j])];
      const ir::Node& source = lowering.nodes[static_cast<std::size_t>(step.inputs[j])];
      bool ok = j == 0
                    ? in.kind == LoweringNode::Operand && source.param == 0
                    : in.kind == LoweringNode::Constant || in.kind == LoweringNode::ConstantLayout;
      if (!ok) return std::nullopt;
    }
    return plain_free_reducer(e.kernel, node);
  }
};

std::optional<NoProgram> OpEmission::emit_instruction(std::size_t m, const sem::InstrSpec* spec) {
  const ir::Node& step = lowering.nodes[m];
  SmallVector<int, 3> ins;
  SmallVector<Window, 3> windows;
  SmallVector<Shape, 3> in_shapes;
  for (std::size_t j = 0; j < step.inputs.size(); ++j) {
    Lowered<Tile> t = operand(step.inputs[j], spec, j);
    if (!t) return t.no_program();
    ins.push_back(t->buffer);
    windows.push_back(t->window);
    in_shapes.push_back(t->shape);
  }
  Shape out_shape = shapes.shape_of(m);
  Lowered<Inst*> made = make_inst(e, spec, in_shapes, out_shape, dtype, {node, false});
  if (!made) return made.no_program();
  Inst& in = **made;
  in.attrs = step.attrs;
  if (auto no = place_moving_attrs(e, in)) return no;
  in.in = std::move(ins);
  in.in_window = std::move(windows);
  static const std::vector<sem::Memory> sbuf_only = {sem::Memory::Sbuf};
  const auto& out_memory = spec->out_memory.empty() ? sbuf_only : spec->out_memory;
  auto writes = [&](sem::Memory memory) {
    return std::find(out_memory.begin(), out_memory.end(), memory) != out_memory.end();
  };
  bool into_dest =
      static_cast<int>(m) == root && dest && writes(e.builder.buffer(dest->buffer).memory);
  sem::Memory memory = writes(sem::Memory::Sbuf) ? sem::Memory::Sbuf : out_memory.front();
  Tile out =
      into_dest ? *dest : Tile{add_buffer(e, "t", memory, dtype, out_shape, depth), {}, out_shape};
  if (!into_dest && memory == sem::Memory::Psum)  // a PE transpose's result (psum_depth.cpp)
    e.builder.buffer(out.buffer).fills_psum = true;
  in.out = out.buffer;
  in.out_window = out.window;
  if (static_cast<int>(m) == root) {
    in.accumulate_block = accumulate;
    if (e.plan.notes) in.note = e.describe(node);
    in.reduces = reduces_operand(step);
  }
  e.builder.place(block, in);
  tiles[m] = std::move(out);
  return std::nullopt;
}

// A result that is a tile just loaded from HBM (the lowering was the load itself, or a DMA
// instruction fused into it: a dma_transpose of x for a hoisted x^T) and that nothing has read
// yet: the load writes `dest` directly instead of a copy following it on a compute engine (which
// would also order the matmul reading `dest` behind that engine's other work). True when done;
// the load's buffer, made last for this load alone, is dropped.
bool load_into_dest(Emission& e, const Tile& result, const Tile& dest) {
  Program& p = e.builder.program();
  if (p.insts.empty() || result.buffer + 1 != static_cast<int>(p.buffers.size()) ||
      !result.window.whole() || result.shape != dest.shape)
    return false;
  auto loaded_by = std::find_if(e.load_of.begin(), e.load_of.end(),
                                [&](const auto& l) { return l.first == result.buffer; });
  if (loaded_by == e.load_of.end() || loaded_by->second + 1 != static_cast<int>(p.insts.size()))
    return false;
  const Buffer &from = p.buffers.back(), &to = e.builder.buffer(dest.buffer);
  if (from.memory != to.memory || from.dtype != to.dtype) return false;
  Inst& load = p.insts.back();
  load.out = dest.buffer;
  load.out_window = dest.window;
  loaded_by->first = dest.buffer;
  if (e.fusable_load == result.buffer) e.fusable_load = -1;
  p.buffers.pop_back();
  return true;
}

}  // namespace

Lowered<Tile> emit_lowering(Emission& e, int block, int node, const std::vector<Tile>& operands,
                            const Tile* dest, int accumulate, Depth depth,
                            const ir::Kernel* program) {
  e.current_node = node;
  const OpPick& pick = e.plan.picks.at(node);
  if (!program && !pick.lowering)
    return NoProgram{fmt::format("'{}' has no instruction lowering", e.kernel.nodes[node].op)};
  const ir::Kernel& lowering = program ? *program : *pick.lowering;
  OpEmission op{e, block, node, operands, dest, accumulate, depth, lowering, prepared(e, lowering)};
  std::size_t first = e.builder.program().insts.size();
  for (std::size_t m = 0; m < lowering.nodes.size(); ++m)
    if (auto no = op.emit_step(m)) return *no;
  Tile result = *op.tiles[static_cast<std::size_t>(op.root)];
  if (dest && result.buffer != dest->buffer) {
    if (!load_into_dest(e, result, *dest))
      if (auto no = copy_tile(e, block, node, result, *dest, "copy")) return *no;
    result = *dest;
  }
  e.emitted.push_back({node, result.buffer, first, e.builder.program().insts.size()});
  return result;
}

}  // namespace ts::lower

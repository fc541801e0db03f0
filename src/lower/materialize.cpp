#include "tilesweep/lower/materialize.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <deque>
#include <numeric>
#include <optional>
#include <tuple>

#include <fmt/ranges.h>

#include "tilesweep/ir/graph_edit.h"
#include "tilesweep/ir/interpreter.h"
#include "tilesweep/lower/fusion.h"
#include "tilesweep/lower/tile_op.h"
#include "tilesweep/sim/instr_cost.h"

namespace ts::lower {

namespace {

// A value dim as a view of an HBM buffer dim: element i of the value is element
// offset + stride * (i // repeat) of base dim `base`; `broadcast` repeats one element.
struct VDim {
  int base = -1;
  std::int64_t offset = 0, stride = 1;
  bool broadcast = false;
  std::int64_t repeat = 1;  // np.repeat along this dim (only batch dims: their loop is split)
};
struct View {
  int buffer = -1;
  std::vector<VDim> dims;                 // per value dim
  std::vector<std::int64_t> base_offset;  // per buffer dim no value dim maps (fixed)
};

// Where one value dim sits in a tile access: its start terms (value coordinates), its extent,
// and the tile dim it feeds (-1: none).
struct Place {
  Terms terms;
  std::int64_t extent = 1;
  int tile_dim = -1;
};

// An on-chip value inside a group: a buffer holding `cols` columns per row tile, `block` row
// tiles side by side.
struct Value {
  int buffer = -1;
  std::int64_t cols = 1;
};

// The engine choice an instruction takes: its op's pick (the op's own, or its copies') or,
// for node -1, the instruction's first engine.
struct EngineOf {
  int node = -1;
  bool copies = false;
};

int engine_index(const Plan& plan, EngineOf e) {
  if (e.node < 0) return 0;
  const OpPick& pick = plan.picks.at(e.node);
  return e.copies ? pick.copies() % 2 : pick.engine;
}

sem::Engine engine_of(const sem::InstrSpec& spec, int index) {
  return spec.engines[std::min<std::size_t>(static_cast<std::size_t>(index), spec.engines.size() - 1)];
}

// A buffer's multi-buffering depth: the candidate's (`cap` > 0, at most cap), or `bufs` fixed.
struct Depth {
  int bufs = 1;
  int cap = 0;
};
constexpr int kUncapped = 1 << 20;

using Shape = sim::TileShape;

struct Tile {
  int buffer = -1;
  Window window;
  Shape shape;  // [rows, cols] of the window
};

// True when the output's partition dim is an operand's free dim (a transpose): such an
// instruction cannot be repeated over pieces of a larger tile, the pieces would land on the
// wrong partitions.
bool moves_across_partitions(const sem::InstrSpec& in) {
  const auto& out = in.op.out.items;
  if (out.size() < 2 || out[out.size() - 2].name.empty()) return false;
  for (const auto& s : in.op.shapes)
    if (!s.items.empty() && s.items.back().name == out[out.size() - 2].name) return true;
  return false;
}

std::int64_t largest_divisor(std::int64_t n, std::int64_t limit) {
  for (std::int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

// group_extent with the nodes' concrete shapes and frames from `shape_of(node)` and `frame(node)`.
template <class ShapeOf, class FrameOf>
GroupExtent extent_of(const ir::Kernel& k, const std::vector<int>& group, ShapeOf shape_of, FrameOf frame) {
  GroupExtent e;
  Frame f = frame(group.front());
  const auto& s = shape_of(group.front());
  e.rows = f.row >= 0 ? s[f.row] : 1;
  std::int64_t cols = -1;
  for (int n : group) {
    const ir::Node& node = k.nodes[n];
    const auto& sh = shape_of(n);
    Frame fn = frame(n);
    std::int64_t c = fn.col >= 0 ? sh[fn.col] : 1;
    if (is_matmul(node)) {
      e.has_matmul = true;
      e.matmul_n.push_back(c);
      e.elementwise = false;
    } else if (node.attrs.count("axis")) {
      e.elementwise = false;
    }
    if (cols >= 0 && c != cols) e.elementwise = false;
    cols = std::max(cols, c);
  }
  e.cols = std::max<std::int64_t>(cols, 1);
  return e;
}

// A dim's canonical key is the symbol's name when it is a bare symbol, and no other dim's key is
// an identifier (constants are digits, compound sizes carry operators): no symbol list needed.
bool bare_symbol(const sem::Dim& d) {
  const std::string& k = d.key();
  if (k.empty() || std::isdigit(static_cast<unsigned char>(k[0]))) return false;
  return std::all_of(k.begin(), k.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

// Where a size in a lowering program comes from: dim `dim` of operand `operand`'s tile, or the
// constant `value` (operand -1).
struct Extent {
  int operand = -1, dim = 0;
  std::int64_t value = 0;
};

// One node of a lowering program as emission needs it, worked out once per program (not per
// instruction built): what it is, its instruction, and its shape from the operands' tiles.
struct LoweringNode {
  enum Kind { Operand, Constant, ConstantLayout, Instruction } kind = Instruction;
  const sem::InstrSpec* spec = nullptr;  // Instruction: null when the target lacks it
  std::optional<double> value;           // Constant: its value when no dim decides it
  std::optional<Extent> value_dim;       // Constant: the operand dim that is its value
  std::vector<Extent> shape;
  bool resolved = false;  // `shape` holds every dim; else they are evaluated from the bound dims
};
struct PreparedLowering {
  std::vector<LoweringNode> nodes;
};

namespace {

PreparedLowering prepare_lowering(const ir::Kernel& L, const sem::InstrTable& isa) {
  // The operand dims as emission binds them (a later operand's binding wins).
  std::map<std::string, Extent, std::less<>> bound;
  for (std::size_t i = 0; i < L.params.size(); ++i)
    for (std::size_t d = 0; d < L.params[i].shape.size(); ++d)
      if (bare_symbol(L.params[i].shape[d])) bound[L.params[i].shape[d].key()] = {static_cast<int>(i), static_cast<int>(d), 0};
  PreparedLowering P;
  P.nodes.resize(L.nodes.size());
  for (std::size_t m = 0; m < L.nodes.size(); ++m) {
    const ir::Node& ln = L.nodes[m];
    LoweringNode& pn = P.nodes[m];
    pn.resolved = true;
    for (const auto& d : ln.shape) {
      if (d.is_const()) {
        pn.shape.push_back({-1, 0, d.value()});
      } else if (auto b = bound.find(d.key()); b != bound.end()) {
        pn.shape.push_back(b->second);
      } else {
        pn.resolved = false;
        break;
      }
    }
    if (ln.param >= 0) {
      pn.kind = LoweringNode::Operand;
    } else if (ln.op == "const" || ln.op == "dim") {
      pn.kind = LoweringNode::Constant;
      const auto& v = ln.attrs.at("value");
      if (auto* x = std::get_if<double>(&v)) pn.value = *x;
      else if (auto* i = std::get_if<std::int64_t>(&v)) pn.value = static_cast<double>(*i);
      else if (std::get<sem::Dim>(v).is_const()) pn.value = static_cast<double>(std::get<sem::Dim>(v).value());
      else if (auto b = bound.find(std::get<sem::Dim>(v).key()); b != bound.end()) pn.value_dim = b->second;
    } else if (classify(ln) == OpClass::Layout && P.nodes[ln.inputs[0]].kind == LoweringNode::Constant) {
      pn.kind = LoweringNode::ConstantLayout;
    } else {
      pn.spec = isa.find(ln.op);
    }
  }
  return P;
}

}  // namespace

struct Prefix {
  Program program;  // the HBM tensors and the top-level block
  std::vector<std::vector<std::int64_t>> shapes;  // per kernel node, concrete
  std::vector<std::optional<View>> views;         // per node: its HBM view, if any
  std::vector<std::optional<double>> consts;      // per node: its folded value, if constant
  std::vector<int> group_of;                      // per node: its fusion group (-1: none)
  std::vector<Frame> frames;                      // per node: frame_of, rank -1 where it throws
  std::vector<std::pair<const ir::Kernel*, PreparedLowering>> lowerings;  // the section's, by address

  const PreparedLowering* lowering(const ir::Kernel* L) const {
    auto it = std::lower_bound(lowerings.begin(), lowerings.end(), L, [](const auto& e, const ir::Kernel* k) { return e.first < k; });
    return it != lowerings.end() && it->first == L ? &it->second : nullptr;
  }
};

namespace {

class Materializer {
 public:
  Materializer(const ir::Kernel& k, const sem::DimEnv& dims, const sim::Target& t, const Plan& plan)
      : k_(k), dims_(dims), t_(t), plan_(plan), pre_(plan.prefix ? *plan.prefix : own_) {}

  Program run() {
    if (plan_.prefix) {
      p_ = plan_.prefix->program;
      reserve();
    } else {
      prepare();
    }
    for (std::size_t g = 0; g < plan_.groups.size(); ++g) emit_group(static_cast<int>(g));
    p_.cores = plan_.cores;
    validate(p_);
    return std::move(p_);
  }

  Prefix prefix() && {
    prepare();
    own_.program = std::move(p_);
    return std::move(own_);
  }

 private:
  // Room for a typical program, so the vectors are not regrown (moving every Inst) as it is built.
  void reserve() {
    std::size_t n = k_.nodes.size();
    p_.buffers.reserve(4 * n + 8);
    p_.insts.reserve(4 * n + 8);
    p_.blocks.reserve(2 * n + 4);
  }

  Frame frame(int node) const { return frames_[node].rank >= 0 ? frames_[node] : frame(node); }

  // ---- set-up: shapes, constants, HBM buffers and views ----
  void prepare() {
    p_.kernel = k_.name;
    p_.blocks.push_back(Block{});
    reserve();
    std::size_t n = k_.nodes.size();
    own_.shapes.resize(n);
    own_.views.resize(n);
    own_.consts.resize(n);
    own_.group_of.assign(n, -1);
    for (std::size_t g = 0; g < plan_.groups.size(); ++g)
      for (int m : plan_.groups[g]) own_.group_of[m] = static_cast<int>(g);
    for (std::size_t i = 0; i < n; ++i) own_.shapes[i] = ir::concrete_shape(k_.nodes[i].shape, dims_);
    own_.frames.assign(n, Frame{-1, -1, -1});
    for (std::size_t i = 0; i < n; ++i) {
      try {
        own_.frames[i] = frame_of(k_, static_cast<int>(i));
      } catch (const Unsupported&) {
        // frame() asks again, and throws, if the program ever needs this node's frame
      }
    }
    std::vector<bool> hbm(n, false);
    for (std::size_t i = 0; i < n; ++i)
      if (k_.nodes[i].op == "concat") concat_in_place(static_cast<int>(i));
      else if (k_.nodes[i].op == "transpose") transpose_in_place(static_cast<int>(i));
    for (int o : k_.outputs) {
      if (classify(k_.nodes[o]) != OpClass::Compute && !own_.views[o])
        throw Unsupported(fmt::format("output {} is a '{}', not a computed value", output_index(o), k_.nodes[o].op));
      hbm[o] = true;
    }
    for (std::size_t i = 0; i < n; ++i)
      for (int in : k_.nodes[i].inputs)
        if (own_.group_of[in] >= 0 && own_.group_of[in] != own_.group_of[i]) hbm[in] = true;
    for (std::size_t i = 0; i < n; ++i) {
      const ir::Node& node = k_.nodes[i];
      OpClass c = classify(node);
      if (own_.views[i]) continue;  // placed by concat_in_place / transpose_in_place
      if (c == OpClass::Input) own_.views[i] = identity(add_hbm(node.label, i, node.param, -1));
      else if (c == OpClass::Constant) own_.consts[i] = constant_value(node, dims_);
      else if (is_constant(k_, static_cast<int>(i))) own_.consts[i] = fold(static_cast<int>(i));
      else if (c == OpClass::Layout) layout(static_cast<int>(i));
      else if (hbm[i] && !own_.views[i]) own_.views[i] = identity(add_hbm(node.label.empty() ? node.op + std::to_string(i) : node.label, i, -1, output_index(i)));
    }
  }

  // A concat of computed values that nothing else reads: its operands are written straight into
  // their parts of the concat's HBM tensor (their views are slices of it), no copy.
  void concat_in_place(int id) {
    const ir::Node& n = k_.nodes[id];
    for (int in : n.inputs) {
      if (classify(k_.nodes[in]) != OpClass::Compute || is_constant(k_, in) || output_index(in) >= 0) return;
      for (const auto& m : k_.nodes)
        for (int x : m.inputs)
          if (x == in && &m != &n) return;
    }
    auto axis = static_cast<std::size_t>(std::get<std::int64_t>(n.attrs.at("axis")));
    own_.views[id] = identity(add_hbm(n.label.empty() ? "concat" + std::to_string(id) : n.label, id, -1, output_index(id)));
    std::int64_t offset = 0;
    for (int in : n.inputs) {
      View v = *own_.views[id];
      v.dims[axis].offset = offset;
      own_.views[in] = v;
      offset += own_.shapes[in][axis];
    }
  }

  // A transposed computed value that is only a kernel output: the value is stored straight
  // through the transposed view of the output's HBM tensor (a permuting DMA store), no copy.
  void transpose_in_place(int id) {
    const ir::Node& n = k_.nodes[id];
    int in = n.inputs[0];
    if (classify(k_.nodes[in]) != OpClass::Compute || is_constant(k_, in) || output_index(in) >= 0 || own_.views[in] ||
        output_index(id) < 0)
      return;
    for (const auto& m : k_.nodes)
      for (int x : m.inputs)
        if ((x == in && &m != &n) || x == id) return;
    const auto& axes = std::get<std::vector<sem::Dim>>(n.attrs.at("axes"));
    View out = identity(add_hbm(n.label.empty() ? "transpose" + std::to_string(id) : n.label, id, -1, output_index(id)));
    View v = out;
    for (std::size_t d = 0; d < axes.size(); ++d) v.dims[static_cast<std::size_t>(axes[d].value())] = out.dims[d];
    own_.views[id] = out;
    own_.views[in] = v;
  }

  int output_index(std::size_t node) const {
    for (std::size_t o = 0; o < k_.outputs.size(); ++o)
      if (k_.outputs[o] == static_cast<int>(node)) return static_cast<int>(o);
    return -1;
  }

  int add_hbm(const std::string& name, std::size_t node, int param, int output) {
    Buffer b;
    b.name = name.empty() ? "t" + std::to_string(node) : name;
    b.memory = sem::Memory::Hbm;
    b.dtype = k_.nodes[node].dtype;
    b.shape = own_.shapes[node];
    b.param = param;
    b.output = output;
    p_.buffers.push_back(std::move(b));
    return static_cast<int>(p_.buffers.size()) - 1;
  }

  View identity(int buffer) const {
    View v;
    v.buffer = buffer;
    v.base_offset.assign(p_.buffers[buffer].shape.size(), 0);
    for (std::size_t d = 0; d < p_.buffers[buffer].shape.size(); ++d) v.dims.push_back({static_cast<int>(d), 0, 1, false});
    return v;
  }

  static double constant_value(const ir::Node& n, const sem::DimEnv& env) {
    const auto& v = n.attrs.at("value");
    if (auto* d = std::get_if<double>(&v)) return *d;
    if (auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
    return static_cast<double>(std::get<sem::Dim>(v).evaluate(env).value());
  }

  // The value of an op over constants (every constant is uniform): the op on 0-d operands.
  double fold(int id) const {
    const ir::Node& n = k_.nodes[id];
    if (classify(n) == OpClass::Layout) return own_.consts[n.inputs[0]].value();
    if (n.spec->broadcast != std::vector<std::string>{"S"})
      throw Unsupported(fmt::format("'{}' of constants is not folded (only element-wise ops are)", n.op));
    ir::Kernel one;
    std::vector<int> ins;
    std::vector<ir::Tensor> values;
    for (int in : n.inputs) {
      ir::Param p;
      p.name = "c" + std::to_string(ins.size());
      p.scalar = true;
      ir::Node x;
      x.op = "input";
      x.param = static_cast<int>(one.params.size());
      p.node = static_cast<int>(one.nodes.size());
      ins.push_back(p.node);
      one.nodes.push_back(x);
      one.params.push_back(p);
      ir::Tensor v;
      v.data[0] = own_.consts[in].value();
      values.push_back(v);
    }
    one.outputs = {ir::add_op(one, *n.spec, ins, n.attrs, n.loc)};
    return ir::evaluate(one, dims_, values, ir::Precision::F64)[0].data[0];
  }

  void layout(int id) {
    const ir::Node& n = k_.nodes[id];
    int in = n.inputs[0];
    if (own_.consts[in]) {
      own_.consts[id] = own_.consts[in];
      return;
    }
    if (!own_.views[in])
      throw Unsupported(fmt::format("'{}' of a value computed on chip: layout ops apply to kernel inputs so far", n.op));
    View v = *own_.views[in];
    if (n.op == "transpose") {
      const auto& axes = std::get<std::vector<sem::Dim>>(n.attrs.at("axes"));
      View t = v;
      for (std::size_t d = 0; d < axes.size(); ++d) t.dims[d] = v.dims[axes[d].value()];
      own_.views[id] = t;
    } else if (n.op == "slice") {
      auto at = [&](const char* name, std::size_t d) { return std::get<std::vector<sem::Dim>>(n.attrs.at(name))[d].evaluate(dims_).value(); };
      for (std::size_t d = 0; d < v.dims.size(); ++d) {
        if (v.dims[d].repeat > 1 && (at("begin", d) != 0 || at("step", d) != 1))
          throw Unsupported("a slice of a repeated dim has no DMA access pattern yet");
        v.dims[d].offset += v.dims[d].stride * at("begin", d);
        v.dims[d].stride *= at("step", d);
      }
      own_.views[id] = v;
    } else if (n.op == "broadcast_to") {
      const auto& in_shape = own_.shapes[in];
      View b = v;
      b.dims.clear();
      std::size_t lead = own_.shapes[id].size() - in_shape.size();
      for (std::size_t d = 0; d < own_.shapes[id].size(); ++d) {
        if (d < lead) b.dims.push_back({-1, 0, 1, true});
        else {
          VDim x = v.dims[d - lead];
          if (in_shape[d - lead] == 1 && own_.shapes[id][d] != 1) x.broadcast = true;
          b.dims.push_back(x);
        }
      }
      own_.views[id] = b;
    } else if (n.op == "reshape") {
      if (!is_identity(v)) throw Unsupported("reshape of a strided or transposed view");
      Buffer b = p_.buffers[v.buffer];
      b.name += "_r";
      b.shape = own_.shapes[id];
      b.alias = b.alias >= 0 ? b.alias : v.buffer;
      b.param = -1;
      b.output = -1;
      p_.buffers.push_back(std::move(b));
      own_.views[id] = identity(static_cast<int>(p_.buffers.size()) - 1);
    } else if (n.op == "repeat") {
      auto axis = static_cast<std::size_t>(std::get<std::int64_t>(n.attrs.at("axis")));
      v.dims[axis].repeat *= std::get<sem::Dim>(n.attrs.at("repeats")).evaluate(dims_).value();
      own_.views[id] = v;
    } else {
      throw Unsupported(fmt::format("'{}' has no DMA access pattern yet", n.op));
    }
  }

  bool is_identity(const View& v) const {
    if (v.dims.size() != p_.buffers[v.buffer].shape.size()) return false;
    for (std::size_t d = 0; d < v.dims.size(); ++d)
      if (v.dims[d].base != static_cast<int>(d) || v.dims[d].offset || v.dims[d].stride != 1 || v.dims[d].broadcast ||
          v.dims[d].repeat != 1)
        return false;
    return true;
  }

  // ---- program building blocks ----
  int loop(int parent, const std::string& var, std::int64_t trips) {
    if (trips <= 1) return parent;
    Block b;
    b.var = var;
    b.trips = trips;
    b.parent = parent;
    p_.blocks.push_back(b);
    int id = static_cast<int>(p_.blocks.size()) - 1;
    p_.blocks[parent].items.push_back({-1, id});
    return id;
  }
  static int var_of(int block, int parent) { return block == parent ? -1 : block; }

  int add_buffer(const std::string& name, sem::Memory m, ir::DType dt, const Shape& shape, Depth depth) {
    Buffer b;
    b.name = name + std::to_string(p_.buffers.size());
    b.memory = m;
    b.dtype = dt;
    b.shape.assign(shape.begin(), shape.end());
    b.bufs = depth.bufs;
    b.bufs_cap = depth.cap;
    b.nest = nest_;
    p_.buffers.push_back(std::move(b));
    return static_cast<int>(p_.buffers.size()) - 1;
  }

  // Puts the instruction make_inst() appended last at the end of `block`. Instructions are
  // built in place: an Inst is large (its short lists are inline), so it is never moved.
  void add_inst(int block, const Inst& in) {
    TS_CHECK(&in == &p_.insts.back(), "an instruction is placed after another was made");
    p_.blocks[block].items.push_back({static_cast<int>(p_.insts.size()) - 1, -1});
  }

  // The instructions every program uses, looked up once per program.
  enum Common { DmaCopy, TensorCopy, Memset };
  Inst& make_inst(Common which, const SmallVector<Shape, 3>& operands, const Shape& out, ir::DType dt, EngineOf engine) {
    static constexpr const char* kNames[] = {"dma_copy", "tensor_copy", "memset"};
    const sem::InstrSpec*& spec = common_[which];
    if (!spec) spec = t_.isa.find(kNames[which]);
    if (!spec) throw Unsupported(fmt::format("target '{}' has no '{}' instruction", t_.name, kNames[which]));
    return make_inst(spec, operands, out, dt, engine);
  }
  // Appends a new instruction to the program, for add_inst() to place.
  Inst& make_inst(const sem::InstrSpec* spec, const SmallVector<Shape, 3>& operands, const Shape& out, ir::DType dt,
                  EngineOf engine) {
    const std::string& name = spec->op.name;
    Inst& in = p_.insts.emplace_back();
    in.spec = spec;
    in.engine = engine_of(*spec, engine_index(plan_, engine));
    in.engine_node = engine.node;
    in.engine_copies = engine.copies;
    auto v = sim::instr_vars(t_, *in.spec, {operands.data(), operands.size()}, out, dt);
    if (v.repeat > 1 && moves_across_partitions(*in.spec))
      throw Unsupported(fmt::format("{} moves data across partitions and handles at most its limits; the tile is {}",
                                    name, fmt::join(out, " x ")), current_node_);
    in.vars = v.vars;
    in.repeat = v.repeat;
    return in;
  }

  // A DMA between the value `view` (placed per value dim) and an on-chip tile.
  Access access(const View& v, const std::vector<Place>& places) const {
    const Buffer& b = p_.buffers[v.buffer];
    std::size_t rank = b.shape.size();
    Access a;
    a.buffer = v.buffer;
    a.extent.assign(rank, 1);
    a.terms.assign(rank, {});
    a.tile_dim.assign(rank, -1);
    a.offset = v.base_offset;
    a.stride.assign(rank, 1);
    for (std::size_t d = 0; d < v.dims.size(); ++d) {
      const VDim& x = v.dims[d];
      if (x.base < 0 || x.broadcast) continue;
      const Place& pl = places[d];
      a.offset[x.base] = x.offset;
      a.stride[x.base] = x.stride;
      a.extent[x.base] = pl.extent;
      a.tile_dim[x.base] = pl.tile_dim;
      if (x.repeat > 1) {
        repeated_terms(x, pl, a.terms[x.base]);
        continue;
      }
      for (const auto& [blk, step] : pl.terms)
        if (blk >= 0) a.terms[x.base].push_back({blk, step * x.stride});
    }
    return a;
  }

  // The terms of a repeated dim: (i // repeat) of a batch index whose loop is split into
  // multiples of `repeat` (kept, divided) and an inner part below it (dropped).
  void repeated_terms(const VDim& x, const Place& pl, Terms& out) const {
    if (pl.extent > 1) throw Unsupported("'repeat' along a tiled (row or free) dim has no DMA access pattern yet");
    std::int64_t inner = 0;
    for (const auto& [blk, step] : pl.terms) {
      if (blk < 0) continue;
      if (step % x.repeat == 0) out.push_back({blk, step / x.repeat * x.stride});
      else inner += step * (p_.blocks[blk].trips - 1);
    }
    if (inner >= x.repeat) throw InternalError("a repeated dim's loop is not split at its repeat count");
  }

  Tile load(int block, int value, const std::vector<Place>& places, const Shape& tile, Depth depth) {
    const ir::Node& n = k_.nodes[value];
    int buf = add_buffer(n.label.empty() ? "in" : n.label, sem::Memory::Sbuf, n.dtype, tile, depth);
    Inst& in = make_inst(DmaCopy, {tile}, tile, n.dtype, {});
    in.dma = true;
    in.out = buf;
    in.hbm = access(*view_of(value), places);
    if (plan_.notes) in.note = "load " + p_.buffers[in.hbm.buffer].name;
    add_inst(block, in);
    load_of_.push_back({buf, static_cast<int>(p_.insts.size()) - 1});
    return {buf, {}, tile};
  }

  void store(int block, const Tile& from, int value, const std::vector<Place>& places) {
    const ir::Node& n = k_.nodes[value];
    Inst& in = make_inst(DmaCopy, {from.shape}, from.shape, n.dtype, {});
    in.dma = true;
    in.store = true;
    in.in = {from.buffer};
    in.in_window = {from.window};
    in.hbm = access(*view_of(value), places);
    if (plan_.notes) in.note = "store " + p_.buffers[in.hbm.buffer].name;
    add_inst(block, in);
  }

  int constant_tile(double value, const Shape& shape, ir::DType dt) {
    ConstKey key{std::bit_cast<std::uint64_t>(value), shape[0], shape.size() > 1 ? shape[1] : 1};
    for (const auto& [k, buf] : const_tiles_)
      if (k == key) return buf;
    int buf = add_buffer("c", sem::Memory::Sbuf, dt, shape, {});
    p_.buffers[buf].constant = true;
    p_.buffers[buf].nest = -1;  // written once before every loop nest
    Inst& in = make_inst(Memset, {}, shape, dt, {});
    in.out = buf;
    in.attrs = {{"value", value}, {"P", sem::Dim(shape[0])}, {"F", sem::Dim(shape.size() > 1 ? shape[1] : 1)}};
    if (plan_.notes) in.note = fmt::format("constant {}", value);
    // Constants are written once, before every loop.
    auto& top = p_.blocks[0].items;
    top.insert(top.begin(), Item{static_cast<int>(p_.insts.size()) - 1, -1});
    const_tiles_.push_back({key, buf});
    return buf;
  }

  // Copies a tile to SBUF when an instruction cannot read it where it is (PSUM -> SBUF).
  // `allowed` null or empty: any memory.
  Tile ensure_memory(int block, const Tile& t, const std::vector<sem::Memory>* allowed, int node, ir::DType dt) {
    sem::Memory m = p_.buffers[t.buffer].memory;
    if (!allowed || allowed->empty() || std::find(allowed->begin(), allowed->end(), m) != allowed->end()) return t;
    const Buffer& from = p_.buffers[t.buffer];
    int buf = add_buffer("s", sem::Memory::Sbuf, dt, t.shape, {from.bufs, from.bufs_cap});
    Inst& in = make_inst(TensorCopy, {t.shape}, t.shape, dt, {node, true});
    in.in = {t.buffer};
    in.in_window = {t.window};
    in.out = buf;
    in.note = "to SBUF";
    add_inst(block, in);
    return {buf, {}, t.shape};
  }

  // ---- one op's lowering at tile level ----
  // `program`: one of the pick's programs other than its lowering (a transposed producer's pre).
  Tile emit_lowering(int block, int node, const std::vector<Tile>& operands, const Tile* dest, int accumulate, Depth depth,
                     const ir::Kernel* program = nullptr) {
    current_node_ = node;
    const OpPick& pick = plan_.picks.at(node);
    if (!program && !pick.lowering) throw Unsupported(fmt::format("'{}' has no instruction lowering", k_.nodes[node].op));
    const ir::Kernel& L = program ? *program : *pick.lowering;
    const PreparedLowering& P = prepared(L);
    // The dims bound by the operands' shapes, for what the prepared form leaves open.
    std::optional<sem::DimEnv> env;
    auto bound = [&]() -> const sem::DimEnv& {
      if (!env) {
        env.emplace();
        for (std::size_t i = 0; i < L.params.size(); ++i) bind(L.params[i].shape, operands.at(i).shape, *env);
      }
      return *env;
    };
    // An extent's size, if the operand has that dim (else the bound dims decide, as they did).
    auto size_of = [&](const Extent& e) -> std::optional<std::int64_t> {
      if (e.operand < 0) return e.value;
      const Shape& s = operands.at(static_cast<std::size_t>(e.operand)).shape;
      if (static_cast<std::size_t>(e.dim) < s.size()) return s[static_cast<std::size_t>(e.dim)];
      return std::nullopt;
    };
    auto shape_of = [&](std::size_t m) {
      Shape s;
      if (P.nodes[m].resolved) {
        for (const Extent& e : P.nodes[m].shape) {
          auto size = size_of(e);
          if (!size) break;
          s.push_back(*size);
        }
        if (s.size() == P.nodes[m].shape.size()) return s;
      }
      auto v = ir::concrete_shape(L.nodes[m].shape, bound());
      return Shape(v.begin(), v.end());
    };
    std::vector<std::optional<Tile>> at(L.nodes.size());
    std::vector<std::optional<double>> cv(L.nodes.size());
    ir::DType dt = k_.nodes[node].dtype;
    int root = L.outputs[0];
    for (std::size_t m = 0; m < L.nodes.size(); ++m) {
      const ir::Node& ln = L.nodes[m];
      const LoweringNode& pn = P.nodes[m];
      if (pn.kind == LoweringNode::Operand) {
        at[m] = operands[ln.param];
        continue;
      }
      if (pn.kind == LoweringNode::Constant) {
        std::optional<std::int64_t> dim = pn.value_dim ? size_of(*pn.value_dim) : std::nullopt;
        cv[m] = pn.value ? *pn.value : dim ? static_cast<double>(*dim) : constant_value(ln, bound());
        continue;
      }
      if (pn.kind == LoweringNode::ConstantLayout) {
        Shape shape = shape_of(m);
        at[m] = Tile{constant_tile(*cv[ln.inputs[0]], shape, dt), {}, shape};
        continue;
      }
      const sem::InstrSpec* spec = pn.spec;
      if (!spec) throw Unsupported(fmt::format("'{}' in a lowering is not an instruction of {}", ln.op, t_.name));
      if (fuse_dma(spec, ln, at, m)) continue;
      SmallVector<int, 3> ins;
      SmallVector<Window, 3> wins;
      SmallVector<Shape, 3> shapes;
      for (std::size_t j = 0; j < ln.inputs.size(); ++j) {
        int src = ln.inputs[j];
        if (!at[src]) {
          Shape shape = shape_of(static_cast<std::size_t>(src));
          if (shape.empty()) shape = {operands.front().shape.front(), 1};
          at[src] = Tile{constant_tile(cv[src].value(), shape, dt), {}, shape};
        }
        const Tile& t = ensure_memory(block, *at[src], &spec->operand_memory[j], node, dt);
        ins.push_back(t.buffer);
        wins.push_back(t.window);
        shapes.push_back(t.shape);
      }
      Shape out_shape = shape_of(m);
      Inst& in = make_inst(spec, shapes, out_shape, dt, {node, false});
      in.attrs = ln.attrs;
      in.in = std::move(ins);
      in.in_window = std::move(wins);
      static const std::vector<sem::Memory> sbuf_only = {sem::Memory::Sbuf};
      const auto& out_mem = spec->out_memory.empty() ? sbuf_only : spec->out_memory;
      bool into_dest = static_cast<int>(m) == root && dest &&
                       std::find(out_mem.begin(), out_mem.end(), p_.buffers[dest->buffer].memory) != out_mem.end();
      sem::Memory mem = std::find(out_mem.begin(), out_mem.end(), sem::Memory::Sbuf) != out_mem.end() ? sem::Memory::Sbuf : out_mem.front();
      Tile out = into_dest ? *dest : Tile{add_buffer("t", mem, dt, out_shape, depth), {}, out_shape};
      in.out = out.buffer;
      in.out_window = out.window;
      if (static_cast<int>(m) == root) {
        in.accumulate_block = accumulate;
        if (plan_.notes) in.note = describe(node);
      }
      add_inst(block, in);
      at[m] = std::move(out);
    }
    Tile result = *at[root];
    if (dest && result.buffer != dest->buffer) {
      Inst& cp = make_inst(TensorCopy, {result.shape}, result.shape, dt, {node, true});
      cp.in = {result.buffer};
      cp.in_window = {result.window};
      cp.out = dest->buffer;
      cp.out_window = dest->window;
      if (plan_.notes) cp.note = "copy " + describe(node);
      add_inst(block, cp);
      return *dest;
    }
    return result;
  }

  // The prepared form of a lowering program: the prefix's, or prepared here once.
  const PreparedLowering& prepared(const ir::Kernel& L) {
    if (const PreparedLowering* p = pre_.lowering(&L)) return *p;
    for (const auto& [k, p] : local_lowerings_)
      if (k == &L) return p;
    return local_lowerings_.emplace_back(&L, prepare_lowering(L, t_.isa)).second;
  }

  // Instruction fusion dma_copy + transpose -> dma_transpose: a DMA-engine instruction applied
  // to a tile just loaded from HBM becomes that load (the load takes the instruction and its
  // access the instruction's orientation), instead of a second SBUF -> SBUF DMA.
  bool fuse_dma(const sem::InstrSpec* spec, const ir::Node& ln, std::vector<std::optional<Tile>>& at, std::size_t m) {
    if (spec->engines.size() != 1 || spec->engines[0] != sem::Engine::Dma || ln.inputs.size() != 1) return false;
    const auto& src = at[ln.inputs[0]];
    if (!src || src->buffer != fusable_load_ || !src->window.whole())
      throw Unsupported(fmt::format("{} of an on-chip tile (SBUF -> SBUF DMA) is not modeled; it fuses with a load from HBM only",
                                    spec->op.name), current_node_);
    auto lo = std::find_if(load_of_.begin(), load_of_.end(), [&](const auto& l) { return l.first == src->buffer; });
    TS_CHECK(lo != load_of_.end(), "buffer {} has no load", src->buffer);
    Inst& load = p_.insts[lo->second];
    Buffer& b = p_.buffers[src->buffer];
    if (b.shape.size() != 2) return false;
    Shape shape = {b.shape[1], b.shape[0]};
    load.spec = spec;
    load.engine = sem::Engine::Dma;
    for (auto& d : load.hbm.tile_dim)
      if (d >= 0) d = 1 - d;
    const Shape loaded[] = {Shape(b.shape.begin(), b.shape.end())};
    auto v = sim::instr_vars(t_, *spec, loaded, shape, b.dtype);
    load.vars = v.vars;
    if (plan_.notes) load.note += " (transposed by the DMA)";
    b.shape.assign(shape.begin(), shape.end());
    at[m] = Tile{src->buffer, {}, shape};
    return true;
  }

  // Binds the pattern dims that are a bare symbol.
  static void bind(const std::vector<sem::Dim>& pattern, const Shape& shape, sem::DimEnv& env) {
    for (std::size_t d = 0; d < pattern.size() && d < shape.size(); ++d)
      if (bare_symbol(pattern[d])) env[pattern[d].key()] = shape[d];
  }

  std::string describe(int node) const {
    const ir::Node& n = k_.nodes[node];
    return (n.label.empty() ? "" : n.label + " = ") + n.op;
  }

  // ---- a fused group ----
  struct Ctx {
    int group = -1;
    GroupTiling tiling;
    std::vector<Terms> batch;     // index of each batch dim of the group, by its loops
    int strip = -1;               // strip loop block (-1: one trip)
    int body = 0;                 // the block inside the strip loop
    int f = -1;                   // free-tile loop (element-wise groups)
    std::int64_t ft = 0;          // free tile width (element-wise groups)
    std::map<int, Value> values;  // on-chip results of the group's nodes
    // Values computed transposed, chunk by chunk of 128 of N: the consumer's operand in an
    // [nt, N / nt x S] buffer (chunk j at columns j x S), the others in one chunk's [nt, S].
    struct TValue {
      int buffer = -1;
      bool whole = false;  // every chunk of the strip
    };
    std::map<int, TValue> tvalues;
    std::map<int, Tile> scalars;  // scalar operands of transposed ops, loaded for the strip
    std::map<std::pair<int, std::uint64_t>, int> xts;  // (x, pre's structural hash) -> the strip's x^T buffer
  };

  void emit_group(int g) {
    nest_ = g;
    const auto& nodes = plan_.groups[g];
    Ctx c;
    c.group = g;
    c.tiling = plan_.tiling.at(g);
    GroupExtent ext = extent_of(k_, nodes, [&](int n) -> const std::vector<std::int64_t>& { return shape_[n]; },
                                [&](int n) { return frame(n); });
    Frame fr = frame(nodes.front());
    int body = 0;
    int nbatch = fr.row >= 0 ? fr.row : (fr.col >= 0 ? fr.col : fr.rank);
    const auto& s0 = shape_[nodes.front()];
    for (int d = 0; d < nbatch; ++d) {
      // A batch dim some operand repeats runs as two loops, the inner one over the repeats, so
      // that the repeated operand's index is the outer loop's alone.
      std::int64_t r = batch_repeat(nodes, d, s0[d]);
      int b = loop(body, "b" + std::to_string(d), s0[d] / r);
      int bi = loop(b, "b" + std::to_string(d) + "i", r);
      c.batch.push_back({{var_of(b, body), r}, {var_of(bi, b), 1}});
      body = bi;
    }
    std::int64_t rows_per_strip = c.tiling.pt * c.tiling.block;
    if (ext.rows % rows_per_strip != 0)
      throw InternalError(fmt::format("tiling {} x {} does not divide {} rows", c.tiling.pt, c.tiling.block, ext.rows));
    int strip = loop(body, "r", ext.rows / rows_per_strip);
    c.strip = var_of(strip, body);
    c.body = strip;
    if (ext.elementwise && !ext.has_matmul && c.tiling.free > 0 && c.tiling.free < ext.cols) {
      c.ft = c.tiling.free;
      int f = loop(c.body, "f", ext.cols / c.ft);
      c.f = var_of(f, c.body);
      c.body = f;
    }
    // A swap site's values wait until something reads them (only the site's consumer does),
    // then run together in one loop over their chunks.
    std::vector<int> pending;
    auto reads_pending = [&](int node) {
      const auto& in = k_.nodes[node].inputs;
      return std::any_of(in.begin(), in.end(), [&](int x) { return std::count(pending.begin(), pending.end(), x) > 0; });
    };
    std::size_t i = 0;
    while (i < nodes.size()) {
      int node = nodes[i];
      if (is_transposed(node)) {
        pending.push_back(node);
        ++i;
        continue;
      }
      if (!pending.empty() && reads_pending(node)) {
        emit_transposed(c, pending);
        pending.clear();
      }
      if (is_matmul(k_.nodes[node])) {
        emit_matmul(c, nodes[i++]);
        continue;
      }
      std::size_t j = i;
      while (j < nodes.size() && !is_matmul(k_.nodes[nodes[j]]) && !is_transposed(nodes[j]) && (j == i || !reads_pending(nodes[j]))) ++j;
      emit_segment(c, {nodes.begin() + static_cast<std::ptrdiff_t>(i), nodes.begin() + static_cast<std::ptrdiff_t>(j)});
      i = j;
    }
    if (!pending.empty()) emit_transposed(c, pending);
  }

  // The repeat count of batch dim `d` (extent `n`) among the HBM operands of a group's nodes: 1
  // when none repeats it.
  std::int64_t batch_repeat(const std::vector<int>& nodes, int d, std::int64_t n) const {
    std::int64_t r = 1;
    for (int m : nodes)
      for (int in : k_.nodes[m].inputs) {
        if (!view_[in]) continue;
        // The operand's dim under output dim d (right-aligned).
        int od = d + static_cast<int>(view_[in]->dims.size()) - frame(m).rank;
        if (od >= 0 && od < static_cast<int>(view_[in]->dims.size())) r = std::lcm(r, view_[in]->dims[od].repeat);
      }
    if (n % r) throw Unsupported(fmt::format("a batch dim of {} repeated {} times", n, r));
    return r;
  }

  // The columns of a value per row tile, in a group.
  std::int64_t cols_of(const Ctx& c, int node) const {
    Frame f = frame(node);
    if (f.col < 0) return 1;
    return c.ft > 0 && shape_[node][f.col] != 1 ? c.ft : shape_[node][f.col];
  }

  Window row_window(const Ctx& c, int rt, std::int64_t cols, Terms extra = {}, std::int64_t width = 0) const {
    Window w;
    if (rt >= 0) w.terms.push_back({rt, cols});
    for (auto& t : extra)
      if (t.first >= 0) w.terms.push_back(t);
    w.width = width ? width : (c.tiling.block > 1 || !extra.empty() ? cols : 0);
    return w;
  }

  // Places of a value of shape `s`, right-aligned under the frame of `node`'s output: batch
  // dims on the batch loops, the row dim on the strip (and row-tile loop), the col dim on the
  // free-tile loop. Dims of extent 1 under a larger output dim broadcast.
  std::vector<Place> places(const Ctx& c, int node, const std::vector<std::int64_t>& s, int rt, std::int64_t col_extent) const {
    return places(c, frame(node), shape_[node], s, rt, col_extent);
  }
  std::vector<Place> places(const Ctx& c, const Frame& f, const std::vector<std::int64_t>& out, const std::vector<std::int64_t>& s,
                            int rt, std::int64_t col_extent) const {
    std::vector<Place> pl(s.size());
    int lead = f.rank - static_cast<int>(s.size());
    for (std::size_t d = 0; d < s.size(); ++d) {
      int od = static_cast<int>(d) + lead;
      bool bcast = s[d] == 1 && od >= 0 && out[od] != 1;
      if (bcast) continue;
      if (od == f.row) {
        pl[d].terms = {{c.strip, c.tiling.pt * c.tiling.block}, {rt, c.tiling.pt}};
        pl[d].extent = c.tiling.pt;
        pl[d].tile_dim = 0;
      } else if (od == f.col) {
        if (c.f >= 0) pl[d].terms = {{c.f, c.ft}};
        pl[d].extent = col_extent;
        pl[d].tile_dim = 1;
      } else if (od >= 0 && od < static_cast<int>(c.batch.size())) {
        pl[d].terms = c.batch[od];
      }
    }
    return pl;
  }

  void emit_segment(Ctx& c, const std::vector<int>& nodes) {
    int rt_block = loop(c.body, "rt", c.tiling.block);
    int rt = var_of(rt_block, c.body);
    std::map<int, Tile> loaded;
    for (int node : nodes) {
      if (plan_.absorbed.count(node)) continue;  // lowered with its reduction, as one instruction
      const ir::Node& n = k_.nodes[node];
      // A reduction fused with its producer reads the producer's operands.
      int src = node;
      for (const auto& [p, consumer] : plan_.absorbed)
        if (consumer == node) src = p;
      const ir::Node& sn = k_.nodes[src];
      if (src != node && reduces_rows(k_, node))
        throw Unsupported(fmt::format("'{}' across partitions fused with its producer is not placed yet", n.op), node);
      std::int64_t out_cols = cols_of(c, node);
      std::vector<Tile> ops;
      ops.reserve(sn.inputs.size());
      for (std::size_t i = 0; i < sn.inputs.size(); ++i) {
        int in = sn.inputs[i];
        Role role = operand_role(k_, src, static_cast<int>(i));
        std::int64_t w = in_cols(c, src, in);
        Shape tile = {c.tiling.pt, role == Role::Broadcast && w == 1 ? 1 : w};
        // A reduction across partitions reads every row of its operand at once.
        std::int64_t all_rows = rows_reduced(src, in);
        if (all_rows) tile[0] = all_rows;
        if (const_[in]) {
          ops.push_back({constant_tile(*const_[in], tile, n.dtype), {}, tile});
        } else if (c.values.count(in)) {
          const Value& v = c.values.at(in);
          ops.push_back({v.buffer, row_window(c, rt, v.cols), {c.tiling.pt, v.cols}});
        } else {
          auto it = loaded.find(in);
          if (it == loaded.end()) {
            // A reduction's input is placed in its own frame ([.., rows, cols]); an element-wise
            // operand under the output's.
            auto pl = sn.attrs.count("axis")
                          ? places(c, Frame{static_cast<int>(shape_[in].size()), static_cast<int>(shape_[in].size()) - 2,
                                            static_cast<int>(shape_[in].size()) - 1},
                                   shape_[in], shape_[in], rt, w)
                          : places(c, src, shape_[in], rt, w);
            if (all_rows) pl[pl.size() - 2] = Place{{}, all_rows, 0};
            it = loaded.emplace(in, load(rt_block, in, pl, tile, strip_depth(c))).first;
          }
          ops.push_back(it->second);
        }
      }
      int buf = add_buffer(n.label.empty() ? "v" : n.label, sem::Memory::Sbuf, n.dtype, {c.tiling.pt, c.tiling.block * out_cols}, strip_depth(c));
      Tile dest{buf, row_window(c, rt, out_cols), {c.tiling.pt, out_cols}};
      Tile out = emit_lowering(rt_block, node, ops, &dest, -1, strip_depth(c));
      c.values[node] = {buf, out_cols};
      if (view_[node]) store(rt_block, out, node, places(c, node, shape_[node], rt, out_cols));
    }
  }

  // The rows of operand `in` when `node` reduces across them (0 otherwise): all in one tile.
  std::int64_t rows_reduced(int node, int in) const {
    if (!reduces_rows(k_, node)) return 0;
    std::int64_t rows = shape_[in][shape_[in].size() - 2];
    if (rows > t_.sbuf.partitions)
      throw Unsupported(fmt::format("'{}' reduces across {} partitions; at most {} in one tile so far", k_.nodes[node].op, rows,
                                    t_.sbuf.partitions), node);
    return rows;
  }

  // Columns of operand `in` of `node` per row tile: 1 for a per-row scalar, else its col extent
  // (the free tile in a free-tiled group).
  std::int64_t in_cols(const Ctx& c, int node, int in) const {
    const auto& s = shape_[in];
    Frame f = frame(node);
    if (s.empty()) return 1;
    int lead = f.rank - static_cast<int>(s.size());
    int col_in_out = static_cast<int>(s.size()) - 1 + lead;
    // A reduction's input keeps its whole row; an element-wise operand follows the output.
    if (k_.nodes[node].attrs.count("axis")) return s.back();
    if (col_in_out != f.col) return 1;
    if (s.back() == 1) return 1;
    return c.ft > 0 ? c.ft : s.back();
  }

  void emit_matmul(Ctx& c, int node) {
    const ir::Node& n = k_.nodes[node];
    int x = n.inputs[0];
    const auto& out = shape_[node];
    std::int64_t K = shape_[x].back(), N = out.back();
    std::int64_t kt = largest_divisor(K, 128);
    std::int64_t nt = c.tiling.free > 0 ? std::min(c.tiling.free, N) : std::min<std::int64_t>(N, 512);
    if (N % nt) nt = largest_divisor(N, nt);
    int nb = loop(c.body, "n", N / nt), nv = var_of(nb, c.body);
    int kb = loop(nb, "k", K / kt), kv = var_of(kb, nb);
    // The right-hand side tile [kt, nt], loaded once per (n, k) and used by every row tile.
    Tile yt = load_rhs(c, node, kb, kv, kt, nv, nt);
    int rb = loop(kb, "rt", c.tiling.block), rt = var_of(rb, kb);
    Tile xt;
    if (auto it = c.tvalues.find(x); it != c.tvalues.end())  // its K tiles are the value's chunks
      xt = {it->second.buffer, window({{kv, strip_rows(c)}, {rt, c.tiling.pt}}, c.tiling.pt), {kt, c.tiling.pt}};
    else
      xt = lhs_tile(c, node, rb, rt, kv, kt);
    int acc = add_buffer("acc", sem::Memory::Psum, n.dtype, {c.tiling.pt, c.tiling.block * nt}, {std::min(2, c.tiling.bufs), 2});
    Tile acct{acc, row_window(c, rt, nt), {c.tiling.pt, nt}};
    emit_lowering(rb, node, {xt, yt}, &acct, kv, strip_depth(c));
    fusable_load_ = -1;
    // Evacuate PSUM per row tile: into the group's value (for later ops) and/or to HBM. A
    // spilling candidate keeps no strip-long value: later ops load it back from HBM (its
    // output tensor, or a scratch tensor).
    int eb = loop(nb, "rt", c.tiling.block), et = var_of(eb, nb);
    bool used_here = used_in_group(c, node);
    if (used_here && c.tiling.spill) {
      used_here = false;
      if (!view_[node]) spilled_[node] = identity(add_spill(node));
    }
    int buf = used_here ? add_buffer(n.label.empty() ? "mm" : n.label, sem::Memory::Sbuf, n.dtype,
                                     {c.tiling.pt, c.tiling.block * N}, {})
                        : add_buffer("o", sem::Memory::Sbuf, n.dtype, {c.tiling.pt, nt}, strip_depth(c));
    Tile dest = used_here ? Tile{buf, row_window(c, et, N, {{nv, nt}}, nt), {c.tiling.pt, nt}} : Tile{buf, {}, {c.tiling.pt, nt}};
    if (used_here && nv < 0 && c.tiling.block == 1) dest.window = {};
    Inst& cp = make_inst(TensorCopy, {{c.tiling.pt, nt}}, {c.tiling.pt, nt}, n.dtype, {node, true});
    cp.in = {acc};
    cp.in_window = {row_window(c, et, nt)};
    cp.out = dest.buffer;
    cp.out_window = dest.window;
    if (plan_.notes) cp.note = "evacuate " + describe(node);
    add_inst(eb, cp);
    if (used_here) c.values[node] = {buf, N};
    if (view_of(node)) {
      auto pl = places(c, node, out, et, nt);
      pl.back().terms = {{nv, nt}};
      store(eb, dest, node, pl);
    }
  }

  // The right-hand side tile [kt, nt] of matmul `node` at K tile kv and N tile nv, loaded in `block`.
  Tile load_rhs(const Ctx& c, int node, int block, int kv, std::int64_t kt, int nv, std::int64_t nt) {
    int y = k_.nodes[node].inputs[1];
    std::vector<Place> ypl(shape_[y].size());
    Frame f = frame(node);
    int lead = f.rank - static_cast<int>(shape_[y].size());
    for (std::size_t d = 0; d < shape_[y].size(); ++d) {
      int od = static_cast<int>(d) + lead;
      if (d + 2 == shape_[y].size()) ypl[d] = {{{kv, kt}}, kt, 0};
      else if (d + 1 == shape_[y].size()) ypl[d] = {{{nv, nt}}, nt, 1};
      else if (shape_[y][d] != 1 && od >= 0) ypl[d].terms = c.batch.at(od);
    }
    if (!view_of(y)) throw Unsupported("a matmul's right-hand side computed in the same loop nest");
    return load(block, y, ypl, {kt, nt}, strip_depth(c));
  }

  // The left-hand side tile [pt, kt] of matmul `node` at row tile rt and K tile kv: a window of
  // the group's value, or loaded in `block` (and then fusable with a DMA instruction).
  Tile lhs_tile(const Ctx& c, int node, int block, int rt, int kv, std::int64_t kt) {
    int x = k_.nodes[node].inputs[0];
    if (c.values.count(x)) {
      const Value& v = c.values.at(x);
      Tile t{v.buffer, row_window(c, rt, v.cols, {{kv, kt}}, kt), {c.tiling.pt, kt}};
      if (kv < 0 && c.tiling.block == 1) t.window = {};
      return t;
    }
    auto pl = places(c, node, shape_[x], rt, kt);
    pl.back().terms = {{kv, kt}};
    Tile t = load(block, x, pl, {c.tiling.pt, kt}, strip_depth(c));
    fusable_load_ = t.buffer;
    return t;
  }

  // ---- the transposed layout of a swap site (layout_swap.h) ----
  bool is_transposed(int node) const { return std::binary_search(plan_.transposed.begin(), plan_.transposed.end(), node); }

  static std::int64_t strip_rows(const Ctx& c) { return c.tiling.pt * c.tiling.block; }

  // `width` columns starting at the sum of `terms` (loops of one trip, -1, left out).
  static Window window(const Terms& terms, std::int64_t width) {
    Window w;
    for (const auto& t : terms)
      if (t.first >= 0) w.terms.push_back(t);
    w.width = width;
    return w;
  }

  // The strip's x^T for transposed matmul `node`: [kt, K / kt x S], K tile j at columns j x S,
  // built by the pick's `pre` once per (K tile, row tile) and shared by the producers that read
  // the same x through the same pre.
  int transposed_lhs(Ctx& c, int node, std::int64_t kt) {
    const ir::Node& n = k_.nodes[node];
    int x = n.inputs[0];
    const ir::Kernel* pre = plan_.picks.at(node).pre;
    if (!pre) throw InternalError(fmt::format("transposed matmul {} has no pre program", node));
    auto key = std::make_pair(x, ir::structural_hash(*pre));
    if (auto it = c.xts.find(key); it != c.xts.end()) return it->second;
    std::int64_t K = shape_[x].back(), S = strip_rows(c), pt = c.tiling.pt;
    int buf = add_buffer("xT", sem::Memory::Sbuf, n.dtype, {kt, K / kt * S}, {});
    int kb = loop(c.body, "k", K / kt), kv = var_of(kb, c.body);
    int rb = loop(kb, "rt", c.tiling.block), rt = var_of(rb, kb);
    Tile xt = lhs_tile(c, node, rb, rt, kv, kt);
    Tile dest{buf, window({{kv, S}, {rt, pt}}, pt), {kt, pt}};
    emit_lowering(rb, node, {xt}, &dest, -1, strip_depth(c), pre);
    fusable_load_ = -1;
    c.xts[key] = buf;
    return buf;
  }

  // The values of a swap site, computed transposed in one loop over chunks of 128 of N: first
  // the strip's x^T of each producer, then per chunk the producers and the chain in order.
  void emit_transposed(Ctx& c, const std::vector<int>& nodes) {
    std::int64_t N = shape_[nodes.front()].back(), nt = largest_divisor(N, 128);
    for (int node : nodes) {
      if (shape_[node].back() != N) throw Unsupported("values of a swap site with different columns", node);
      if (is_matmul(k_.nodes[node])) transposed_lhs(c, node, largest_divisor(shape_[k_.nodes[node].inputs[0]].back(), 128));
      // Scalar operands, broadcast down the partitions: loaded once per strip.
      for (int in : k_.nodes[node].inputs)
        if (!const_[in] && view_of(in) && !c.scalars.count(in) &&
            std::all_of(shape_[in].begin(), shape_[in].end(), [](std::int64_t d) { return d == 1; }))
          c.scalars.emplace(in, load(c.body, in, std::vector<Place>(shape_[in].size()), {nt, 1}, strip_depth(c)));
    }
    int nb = loop(c.body, "n", N / nt), nv = var_of(nb, c.body);
    for (int node : nodes) {
      // Only what a later nest or the consumer reads keeps every chunk.
      bool whole = false;
      for (int m : plan_.groups[c.group])
        for (int in : k_.nodes[m].inputs) whole = whole || (in == node && !is_transposed(m));
      std::int64_t S = strip_rows(c);
      const ir::Node& n = k_.nodes[node];
      int buf = whole ? add_buffer(n.label.empty() ? "vT" : n.label, sem::Memory::Sbuf, n.dtype, {nt, N / nt * S}, {})
                      : add_buffer(n.label.empty() ? "vT" : n.label, sem::Memory::Sbuf, n.dtype, {nt, S}, strip_depth(c));
      Tile dest{buf, whole ? window({{nv, S}}, S) : Window{}, {nt, S}};
      if (is_matmul(n)) emit_transposed_matmul(c, node, nb, nv, dest);
      else emit_transposed_op(c, node, nb, nv, dest);
      c.tvalues[node] = {buf, whole};
    }
  }

  // A producer's chunk [nt, S] = fused root(x^T, y) accumulated over K in PSUM (one instruction
  // per row tile), evacuated into `dest`.
  void emit_transposed_matmul(Ctx& c, int node, int nb, int nv, const Tile& dest) {
    const ir::Node& n = k_.nodes[node];
    std::int64_t K = shape_[n.inputs[0]].back();
    std::int64_t kt = largest_divisor(K, 128), nt = dest.shape[0], S = strip_rows(c), pt = c.tiling.pt;
    int xT = transposed_lhs(c, node, kt);
    int kb = loop(nb, "k", K / kt), kv = var_of(kb, nb);
    Tile yt = load_rhs(c, node, kb, kv, kt, nv, nt);
    int rb = loop(kb, "rt", c.tiling.block), rt = var_of(rb, kb);
    int acc = add_buffer("acc", sem::Memory::Psum, n.dtype, {nt, S}, {std::min(2, c.tiling.bufs), 2});
    Tile at{xT, window({{kv, S}, {rt, pt}}, pt), {kt, pt}};
    Tile acct{acc, window({{rt, pt}}, pt), {nt, pt}};
    emit_lowering(rb, node, {at, yt}, &acct, kv, strip_depth(c));
    Inst& cp = make_inst(TensorCopy, {{nt, S}}, {nt, S}, n.dtype, {node, true});
    cp.in = {acc};
    cp.in_window = {Window{}};
    cp.out = dest.buffer;
    cp.out_window = dest.window;
    if (plan_.notes) cp.note = "evacuate " + describe(node) + " (transposed)";
    add_inst(nb, cp);
  }

  // An element-wise op of a swap site's chain on one chunk [nt, S] of its transposed operands.
  void emit_transposed_op(Ctx& c, int node, int nb, int nv, const Tile& dest) {
    const ir::Node& n = k_.nodes[node];
    std::int64_t nt = dest.shape[0], S = strip_rows(c);
    std::vector<Tile> ops;
    for (int in : n.inputs) {
      if (const_[in]) {
        ops.push_back({constant_tile(*const_[in], {nt, 1}, n.dtype), {}, {nt, 1}});
      } else if (auto it = c.tvalues.find(in); it != c.tvalues.end()) {
        ops.push_back({it->second.buffer, it->second.whole ? window({{nv, S}}, S) : Window{}, {nt, S}});
      } else if (auto sc = c.scalars.find(in); sc != c.scalars.end()) {
        ops.push_back(sc->second);
      } else {
        throw Unsupported(fmt::format("'{}' computed transposed reads a value that is not", n.op), node);
      }
    }
    emit_lowering(nb, node, ops, &dest, -1, strip_depth(c));
  }

  // An HBM scratch tensor for a spilled value: its whole shape, written and read back by DMA.
  int add_spill(int node) {
    const ir::Node& n = k_.nodes[node];
    Buffer b;
    b.name = "spill_" + (n.label.empty() ? n.op + std::to_string(node) : n.label);
    b.memory = sem::Memory::Hbm;
    b.dtype = n.dtype;
    b.shape = shape_[node];
    b.spill = true;
    p_.buffers.push_back(std::move(b));
    return static_cast<int>(p_.buffers.size()) - 1;
  }

  // The HBM view of a node's value: the prefix's, or its spill tensor's.
  const View* view_of(int node) const {
    if (auto it = spilled_.find(node); it != spilled_.end()) return &it->second;
    return view_[node] ? &*view_[node] : nullptr;
  }

  // The strip's buffers rotate through the candidate's multi-buffering depth.
  static Depth strip_depth(const Ctx& c) { return {c.tiling.bufs, kUncapped}; }

  bool used_in_group(const Ctx& c, int node) const {
    for (int m : plan_.groups[c.group])
      for (int in : k_.nodes[m].inputs)
        if (in == node) return true;
    return false;
  }

  const ir::Kernel& k_;
  const sem::DimEnv& dims_;
  const sim::Target& t_;
  const Plan& plan_;
  Program p_;
  // The prefix is read in place, never copied: the plan's, or one prepare() builds in own_.
  Prefix own_;
  const Prefix& pre_;
  const std::vector<std::vector<std::int64_t>>& shape_ = pre_.shapes;
  const std::vector<std::optional<View>>& view_ = pre_.views;
  const std::vector<std::optional<double>>& const_ = pre_.consts;
  const std::vector<Frame>& frames_ = pre_.frames;
  // Constant tiles made so far, by (value bits, rows, cols); a program has a few.
  using ConstKey = std::tuple<std::uint64_t, std::int64_t, std::int64_t>;
  std::vector<std::pair<ConstKey, int>> const_tiles_;
  const sem::InstrSpec* common_[3] = {};
  int current_node_ = -1;
  int nest_ = -1;                  // the loop nest (group) being emitted
  int fusable_load_ = -1;          // a load only the current lowering reads (dma_transpose fusion)
  std::vector<std::pair<int, int>> load_of_;  // (buffer, the DMA load writing it)
  std::deque<std::pair<const ir::Kernel*, PreparedLowering>> local_lowerings_;  // those the prefix lacks
  std::map<int, View> spilled_;               // node -> the view of its spill tensor
};

}  // namespace

GroupExtent group_extent(const ir::Kernel& k, const std::vector<int>& group, const sem::DimEnv& dims) {
  return extent_of(k, group, [&](int n) { return ir::concrete_shape(k.nodes[n].shape, dims); },
                   [&](int n) { return frame_of(k, n); });
}

Program materialize(const ir::Kernel& k, const sem::DimEnv& dims, const sim::Target& t, const Plan& plan) {
  return Materializer(k, dims, t, plan).run();
}

void rebind(Program& p, const Plan& plan) {
  for (auto& in : p.insts)
    if (in.engine_node >= 0) in.engine = engine_of(*in.spec, engine_index(plan, {in.engine_node, in.engine_copies}));
  for (auto& b : p.buffers)
    if (b.bufs_cap > 0) b.bufs = std::min(b.bufs_cap, plan.tiling.at(static_cast<std::size_t>(b.nest)).bufs);
}

std::shared_ptr<const Prefix> make_prefix(const ir::Kernel& k, const sem::DimEnv& dims, const sim::Target& t,
                                          const std::vector<std::vector<int>>& groups,
                                          std::vector<const ir::Kernel*> lowerings) {
  Plan plan;
  plan.groups = groups;
  Prefix p = Materializer(k, dims, t, plan).prefix();
  std::sort(lowerings.begin(), lowerings.end());
  lowerings.erase(std::unique(lowerings.begin(), lowerings.end()), lowerings.end());
  for (const ir::Kernel* L : lowerings)
    if (L) p.lowerings.emplace_back(L, prepare_lowering(*L, t.isa));
  return std::make_shared<const Prefix>(std::move(p));
}

}  // namespace ts::lower

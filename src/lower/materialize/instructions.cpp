// Building blocks: the buffers, loops and instructions the passes emit, through the Emission's
// ProgramBuilder — loads and stores between HBM views and tiles, constant tiles (written once
// before every loop nest), copies, and an instruction's engine and cost variables.
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>

#include "emission.h"
#include "tilesweep/lower/psum_copy.h"

namespace ts::lower {

namespace {

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

}  // namespace

int engine_index(const ProgramPlan& plan, EngineOf e) {
  if (e.node < 0) return 0;
  const OpPick& pick = plan.picks.at(e.node);
  return e.copies ? std::min(pick.copies(), 1) : pick.engine;
}

sem::Engine engine_of(const sem::InstrSpec& spec, int index) {
  return spec
      .engines[std::min<std::size_t>(static_cast<std::size_t>(index), spec.engines.size() - 1)];
}

std::int64_t largest_divisor(std::int64_t n, std::int64_t limit) {
  for (std::int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

Emission::Emission(const ir::Kernel& k, const sem::DimEnv& dims, const target::Target& t,
                   const ProgramPlan& plan, const Prefix& prefix, Program start)
    : kernel(k), dims(dims), target(t), plan(plan), prefix(prefix), builder(std::move(start)) {
  std::size_t n = k.nodes.size();
  builder.reserve(4 * n + 8, 4 * n + 8, 2 * n + 4);
}

bool Emission::is_transposed(int node) const {
  return std::binary_search(plan.transposed.begin(), plan.transposed.end(), node);
}

std::string Emission::describe(int node) const {
  const ir::Node& n = kernel.nodes[node];
  return (n.label.empty() ? "" : n.label + " = ") + n.op;
}

int nest_loop(Emission& e, int parent, const std::string& var, std::int64_t trips) {
  if (trips <= 1) return parent;
  return e.builder.loop(parent, var, trips);
}

int add_buffer(Emission& e, const std::string& name, sem::Memory m, ir::DType dt,
               const Shape& shape, Depth depth) {
  Buffer b;
  b.name = name + std::to_string(e.builder.program().buffers.size());
  b.memory = m;
  b.dtype = dt;
  b.shape.assign(shape.begin(), shape.end());
  b.bufs = depth.bufs;
  b.bufs_cap = depth.cap;
  b.nest = e.nest;
  return e.builder.add_buffer(std::move(b));
}

Lowered<Inst*> make_inst(Emission& e, Common which, const SmallVector<Shape, 3>& operands,
                         const Shape& out, ir::DType dt, EngineOf engine) {
  static constexpr const char* kNames[] = {"dma_copy", "tensor_copy", "memset"};
  const sem::InstrSpec*& spec = e.common[static_cast<int>(which)];
  if (!spec) spec = e.target.isa.find(kNames[static_cast<int>(which)]);
  if (!spec)
    return NoProgram{fmt::format("target '{}' has no '{}' instruction", e.target.name,
                                 kNames[static_cast<int>(which)])};
  return make_inst(e, spec, operands, out, dt, engine);
}

Lowered<Inst*> make_inst(Emission& e, const sem::InstrSpec* spec,
                         const SmallVector<Shape, 3>& operands, const Shape& out, ir::DType dt,
                         EngineOf engine) {
  Inst& in = e.builder.new_inst();
  in.spec = spec;
  in.engine = engine_of(*spec, engine_index(e.plan, engine));
  in.engine_node = engine.node;
  in.engine_copies = engine.copies;
  auto v = target::instr_vars(e.target, *in.spec, {operands.data(), operands.size()}, out, dt);
  if (v.repeat > 1 && moves_across_partitions(*in.spec))
    return NoProgram{
        fmt::format(
            "{} moves data across partitions and handles at most its limits; the tile is {}",
            spec->op.name, fmt::join(out, " x ")),
        e.current_node};
  in.vars = v.vars;
  in.repeat = v.repeat;
  return &in;
}

Lowered<Tile> load(Emission& e, int block, int value, const std::vector<Place>& places,
                   const Shape& tile, Depth depth) {
  return load_view(e, block, value, *hbm_view(e, value), places, tile, depth);
}

Lowered<Tile> load_view(Emission& e, int block, int value, const HbmView& view,
                        const std::vector<Place>& places, const Shape& tile, Depth depth) {
  const ir::Node& n = e.kernel.nodes[value];
  int buf =
      add_buffer(e, n.label.empty() ? "in" : n.label, sem::Memory::Sbuf, n.dtype, tile, depth);
  Lowered<Inst*> made = make_inst(e, Common::DmaCopy, {tile}, tile, n.dtype, {});
  if (!made) return made.no_program();
  Inst& in = **made;
  if (auto no = hbm_access(e, view, places, in.hbm)) return *no;
  in.dma = true;
  in.out = buf;
  if (e.plan.notes) in.note = "load " + e.builder.buffer(in.hbm.buffer).name;
  int id = e.builder.place(block, in);
  e.load_of.push_back({buf, id});
  return Tile{buf, {}, tile};
}

std::optional<NoProgram> load_into(Emission& e, int block, int value,
                                   const std::vector<Place>& places, const Tile& dest) {
  const ir::Node& n = e.kernel.nodes[value];
  Lowered<Inst*> made = make_inst(e, Common::DmaCopy, {dest.shape}, dest.shape, n.dtype, {});
  if (!made) return made.no_program();
  Inst& in = **made;
  if (auto no = hbm_access(e, *hbm_view(e, value), places, in.hbm)) return *no;
  in.dma = true;
  in.out = dest.buffer;
  in.out_window = dest.window;
  if (e.plan.notes) in.note = "load " + e.builder.buffer(in.hbm.buffer).name;
  int id = e.builder.place(block, in);
  e.load_of.push_back({dest.buffer, id});
  return std::nullopt;
}

std::optional<NoProgram> store(Emission& e, int block, const Tile& from, int value,
                               const std::vector<Place>& places) {
  const ir::Node& n = e.kernel.nodes[value];
  Lowered<Inst*> made = make_inst(e, Common::DmaCopy, {from.shape}, from.shape, n.dtype, {});
  if (!made) return made.no_program();
  Inst& in = **made;
  if (auto no = hbm_access(e, *hbm_view(e, value), places, in.hbm)) return *no;
  in.dma = true;
  in.store = true;
  in.in = {from.buffer};
  in.in_window = {from.window};
  if (e.plan.notes) in.note = "store " + e.builder.buffer(in.hbm.buffer).name;
  e.builder.place(block, in);
  return std::nullopt;
}

Lowered<int> constant_tile(Emission& e, double value, const Shape& shape, ir::DType dt) {
  Emission::ConstKey key{std::bit_cast<std::uint64_t>(value), shape[0],
                         shape.size() > 1 ? shape[1] : 1};
  for (const auto& [made, buf] : e.constant_tiles)
    if (made == key) return buf;
  int buf = add_buffer(e, "c", sem::Memory::Sbuf, dt, shape, {});
  e.builder.buffer(buf).constant = true;
  e.builder.buffer(buf).nest = -1;  // written once before every loop nest
  Lowered<Inst*> made = make_inst(e, Common::Memset, {}, shape, dt, {});
  if (!made) return made.no_program();
  Inst& in = **made;
  in.out = buf;
  in.attrs = {{"value", value},
              {"P", sem::Dim(shape[0])},
              {"F", sem::Dim(shape.size() > 1 ? shape[1] : 1)}};
  if (e.plan.notes) in.note = fmt::format("constant {}", value);
  e.builder.place_first(0, in);  // constants are written once, before every loop
  e.constant_tiles.push_back({key, buf});
  return buf;
}

// The zero bias tile of the Scalar form of a copy of PSUM tile `from` ([rows, ..]) into SBUF
// (psum_copy.h), made before the copy (a constant is an instruction of its own); -1 where the
// copy has one form.
Lowered<int> scalar_bias(Emission& e, int from, int to, std::int64_t rows, ir::DType dt) {
  Program& p = e.builder.program();
  if (p.buffers[from].memory != sem::Memory::Psum || p.buffers[to].memory != sem::Memory::Sbuf)
    return -1;
  if (!p.psum_copy_scalar) {
    if (!e.common[static_cast<int>(Common::TensorCopy)])
      e.common[static_cast<int>(Common::TensorCopy)] = e.target.isa.find("tensor_copy");
    p.psum_copy_vector = e.common[static_cast<int>(Common::TensorCopy)];
    p.psum_copy_scalar =
        p.psum_copy_vector ? scalar_psum_copy(e.target, *p.psum_copy_vector) : nullptr;
  }
  if (!p.psum_copy_scalar) return -1;
  return constant_tile(e, 0.0, {rows, 1}, dt);
}

// Copy `in` (just made) given both forms where `bias` >= 0, in the one the op's copies pick.
void offer_scalar_form(Emission& e, Inst& in, int node, int bias) {
  Program& p = e.builder.program();
  if (bias < 0 || in.spec != p.psum_copy_vector) return;
  in.scalar_bias = bias;
  set_psum_copy_form(p, in, e.plan.picks.at(node).copies());
}

Lowered<Tile> ensure_memory(Emission& e, int block, const Tile& t,
                            const std::vector<sem::Memory>* allowed, int node, ir::DType dt) {
  const Buffer& from = e.builder.buffer(t.buffer);
  if (!allowed || allowed->empty() ||
      std::find(allowed->begin(), allowed->end(), from.memory) != allowed->end())
    return t;
  int buf = add_buffer(e, "s", sem::Memory::Sbuf, dt, t.shape, {from.bufs, from.bufs_cap});
  Lowered<int> bias = scalar_bias(e, t.buffer, buf, t.shape[0], dt);
  if (!bias) return bias.no_program();
  Lowered<Inst*> made = make_inst(e, Common::TensorCopy, {t.shape}, t.shape, dt, {node, true});
  if (!made) return made.no_program();
  Inst& in = **made;
  in.in = {t.buffer};
  in.in_window = {t.window};
  in.out = buf;
  in.note = "to SBUF";
  offer_scalar_form(e, in, node, *bias);
  e.builder.place(block, in);
  return Tile{buf, {}, t.shape};
}

std::optional<NoProgram> copy_tile(Emission& e, int block, int node, const Tile& from,
                                   const Tile& to, const char* verb, const char* suffix) {
  Lowered<int> bias =
      scalar_bias(e, from.buffer, to.buffer, from.shape[0], e.kernel.nodes[node].dtype);
  if (!bias) return bias.no_program();
  Lowered<Inst*> made = make_inst(e, Common::TensorCopy, {from.shape}, from.shape,
                                  e.kernel.nodes[node].dtype, {node, true});
  if (!made) return made.no_program();
  Inst& cp = **made;
  cp.in = {from.buffer};
  cp.in_window = {from.window};
  cp.out = to.buffer;
  cp.out_window = to.window;
  if (e.plan.notes) cp.note = fmt::format("{} {}{}", verb, e.describe(node), suffix);
  offer_scalar_form(e, cp, node, *bias);
  e.builder.place(block, cp);
  return std::nullopt;
}

}  // namespace ts::lower

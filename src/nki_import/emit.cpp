// Program instructions: tiles allocated, instructions checked (engine, operand memories, shapes)
// and placed in the loop block being translated, DMAs, constant tiles, PSUM accumulation.
#include <algorithm>

#include "tilesweep/ir/graph_edit.h"
#include "tilesweep/target/instr_cost.h"
#include "translator.h"

namespace ts::nki {

namespace {

bool allowed(const std::vector<sem::Memory>& list, sem::Memory m) {
  return list.empty() || std::find(list.begin(), list.end(), m) != list.end();
}

// The result shape of `spec` on operands of these [parts, width] shapes (a one-node kernel, as
// the functional interpreter builds): UserError with the op's own words when they do not fit.
std::vector<std::int64_t> result_shape(const sem::InstrSpec& spec, const std::vector<Operand>& in,
                                       const std::vector<ir::DType>& dtypes,
                                       const sem::AttrMap& attrs) {
  ir::Kernel k;
  std::vector<int> args;
  for (std::size_t j = 0; j < in.size(); ++j) {
    ir::Param prm;
    prm.name = j < spec.op.operands.size() ? spec.op.operands[j] : "x";
    prm.dtype = dtypes[j];
    prm.shape = {sem::Dim(in[j].parts), sem::Dim(in[j].width)};
    ir::Node n;
    n.op = "input";
    n.shape = prm.shape;
    n.dtype = prm.dtype;
    n.param = static_cast<int>(j);
    prm.node = static_cast<int>(k.nodes.size());
    args.push_back(prm.node);
    k.nodes.push_back(std::move(n));
    k.params.push_back(std::move(prm));
  }
  int node = ir::add_op(k, spec.op, args, attrs, SourceLoc{});
  std::vector<std::int64_t> out;
  for (const sem::Dim& d : k.nodes[static_cast<std::size_t>(node)].shape) out.push_back(d.value());
  while (out.size() < 2) out.push_back(1);
  return out;
}

}  // namespace

int Translator::alloc(const std::string& name, sem::Memory m, ir::DType dt,
                      std::vector<std::int64_t> shape, int par, const SourceLoc& loc) {
  for (auto d : shape)
    if (d <= 0)
      throw UserError(loc, fmt::format("shape error: '{}' has a dim of size {}", name, d));
  Array a;
  a.name = name;
  a.memory = m;
  a.dtype = dt;
  a.shape = shape;
  a.par = par;
  a.block = block_;
  lower::Buffer b;
  b.name = name;
  b.memory = m;
  b.dtype = dt;
  if (m == sem::Memory::Hbm) {
    b.shape = shape;
  } else {
    if (shape.empty()) shape.push_back(1);
    std::int64_t parts = shape[static_cast<std::size_t>(par)], free = 1;
    int limit = m == sem::Memory::Psum ? target_.psum.partitions : target_.sbuf.partitions;
    if (parts > limit)
      throw UserError(
          loc, fmt::format("shape error: '{}' has {} partitions (its partition dim); {} has {}",
                           name, parts, sem::memory_name(m), limit));
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (static_cast<int>(d) != par) free *= shape[d];
    b.shape = {parts, free};
    // The compiler multi-buffers tiles allocated inside a parallel loop (affine_range / range).
    b.bufs = block_ != 0 && !sequential_[block_] ? kRotatingBuffers : 1;
    b.nest = nest_;
  }
  std::string site = fmt::format("{}:{}:{}", loc.line, loc.col, name);
  auto reused = site_buffers_.find(site);
  if (reuse_ > 0 && reused != site_buffers_.end() &&
      reused->second < static_cast<int>(builder_.program().buffers.size())) {
    const lower::Buffer& old = builder_.buffer(reused->second);
    if (old.memory == b.memory && old.dtype == b.dtype && old.shape == b.shape &&
        m != sem::Memory::Hbm) {
      a.buffer = reused->second;
      arrays_.push_back(std::move(a));
      return static_cast<int>(arrays_.size()) - 1;
    }
  }
  a.buffer = builder_.add_buffer(std::move(b));
  site_buffers_[site] = a.buffer;
  arrays_.push_back(std::move(a));
  return static_cast<int>(arrays_.size()) - 1;
}

Operand Translator::whole(int array) const {
  const lower::Buffer& b = builder_.buffer(arrays_[static_cast<std::size_t>(array)].buffer);
  return Operand{arrays_[static_cast<std::size_t>(array)].buffer, {}, b.shape[0], b.shape[1]};
}

const sem::InstrSpec& Translator::spec(const std::string& name, const SourceLoc& loc) const {
  const sem::InstrSpec* s = target_.isa.find(name);
  if (!s)
    throw UserError(loc, fmt::format("target '{}' has no instruction '{}'", target_.name, name));
  return *s;
}

Value Translator::emit(const std::string& instr, std::optional<sem::Engine> engine,
                       const std::vector<Operand>& in, sem::AttrMap attrs, const Value* dst,
                       std::optional<ir::DType> dtype, bool accumulate, const SourceLoc& loc) {
  const sem::InstrSpec& s = spec(instr, loc);
  sem::Engine eng = engine.value_or(s.engines.front());
  if (std::find(s.engines.begin(), s.engines.end(), eng) == s.engines.end())
    throw UserError(loc, fmt::format("{} cannot run on the {} engine of {}", instr,
                                     sem::engine_name(eng), target_.name));
  std::vector<ir::DType> dtypes;
  for (std::size_t j = 0; j < in.size(); ++j) {
    const lower::Buffer& b = builder_.buffer(in[j].buffer);
    dtypes.push_back(b.dtype);
    if (j < s.operand_memory.size() && !allowed(s.operand_memory[j], b.memory))
      throw UserError(loc, fmt::format("{}'s operand '{}' cannot be in {} on {}", instr,
                                       s.op.operands[j], sem::memory_name(b.memory), target_.name));
  }
  std::vector<std::int64_t> shape;
  try {
    shape = result_shape(s, in, dtypes, attrs);
  } catch (const UserError& e) {
    throw UserError(loc, fmt::format("shape error in {}: {}", instr, e.message()));
  }
  ir::DType dt = dtype.value_or(dtypes.empty() ? ir::DType::F32 : dtypes[0]);
  Operand out;
  Value result;
  int acc = -1;
  if (dst) {
    out = operand(*dst, loc);
    Array& a = arrays_[static_cast<std::size_t>(dst->array)];
    if (!allowed(s.out_memory, a.memory))
      throw UserError(loc, fmt::format("{} cannot write into {} ('{}')", instr,
                                       sem::memory_name(a.memory), a.name));
    if (out.parts != shape[0] || out.width != shape[1])
      throw UserError(
          loc, fmt::format("shape error: {} computes a [{}, {}] tile, the destination is [{}, {}]",
                           instr, shape[0], shape[1], out.parts, out.width));
    if (accumulate) acc = accumulate_block(a, loc);
    a.zeroed = false;
    result = *dst;
  } else {
    sem::Memory m =
        allowed(s.out_memory, sem::Memory::Sbuf) ? sem::Memory::Sbuf : sem::Memory::Psum;
    if (m == sem::Memory::Psum) dt = ir::DType::F32;
    int id = alloc(instr, m, dt, {shape[0], shape[1]}, 0, loc);
    out = whole(id);
    result = Value::of_array(id);
  }
  std::vector<target::TileShape> shapes;
  for (const Operand& o : in) shapes.push_back({o.parts, o.width});
  auto vars =
      target::instr_vars(target_, s, shapes, std::vector<std::int64_t>{out.parts, out.width},
                         dtypes.empty() ? dt : dtypes[0]);
  lower::Inst& inst = builder_.new_inst();
  inst.spec = &s;
  inst.engine = eng;
  for (const Operand& o : in) inst.in.push_back(o.buffer), inst.in_window.push_back(o.win);
  inst.out = out.buffer;
  inst.out_window = out.win;
  inst.attrs = std::move(attrs);
  inst.vars = vars.vars;
  inst.repeat = vars.repeat;
  inst.accumulate_block = acc;
  inst.note = fmt::format("{}:{}", loc.line, loc.col);
  builder_.place(block_, inst);
  return result;
}

void Translator::emit_dma(const HbmAccess& h, const Operand& tile, bool store,
                          const SourceLoc& loc) {
  if (h.empty) return;
  const lower::Buffer& b = builder_.buffer(tile.buffer);
  const sem::InstrSpec& s = spec("dma_copy", loc);
  if (!allowed(s.out_memory, b.memory))
    throw UserError(loc, fmt::format("a DMA cannot reach {} ('{}') on {}",
                                     sem::memory_name(b.memory), b.name, target_.name));
  bool fits = h.clipped ? h.parts <= tile.parts && h.width <= tile.width
                        : h.parts == tile.parts && h.width == tile.width;
  if (!fits)
    throw UserError(
        loc, fmt::format("shape error: the HBM side moves [{}, {}], the tile is [{}, {}]", h.parts,
                         h.width, tile.parts, tile.width));
  lower::Inst& inst = builder_.new_inst();
  inst.spec = &s;
  inst.engine = sem::Engine::Dma;
  inst.dma = true;
  inst.store = store;
  if (store)
    inst.in = {tile.buffer}, inst.in_window = {tile.win};
  else
    inst.out = tile.buffer, inst.out_window = tile.win;
  inst.hbm = h.access;
  inst.note = fmt::format("{}:{}", loc.line, loc.col);
  builder_.place(block_, inst);
}

// A [parts, free] FP32 SBUF tile named `name` holding `value`, written by a memset before every
// loop; its buffer.
int Translator::memset_tile(std::string name, double value, std::int64_t parts, std::int64_t free,
                            const SourceLoc& loc) {
  lower::Buffer b;
  b.name = std::move(name);
  b.memory = sem::Memory::Sbuf;
  b.shape = {parts, free};
  b.constant = true;
  int buf = builder_.add_buffer(std::move(b));
  const sem::InstrSpec& s = spec("memset", loc);
  lower::Inst& inst = builder_.new_inst();
  inst.spec = &s;
  inst.engine = s.engines.front();
  inst.out = buf;
  inst.attrs = {{"value", value}, {"P", sem::Dim(parts)}, {"F", sem::Dim(free)}};
  inst.vars =
      target::instr_vars(target_, s, {}, std::vector<std::int64_t>{parts, free}, ir::DType::F32)
          .vars;
  inst.note = "constant";
  builder_.place_first(0, inst);
  return buf;
}

// A [parts, 1] FP32 tile holding `value`, written once before every loop (an immediate operand).
Operand Translator::constant(double value, std::int64_t parts, const SourceLoc& loc) {
  auto key = std::make_pair(value, parts);
  auto it = constants_.find(key);
  if (it == constants_.end())
    it = constants_.emplace(key, memset_tile(fmt::format("const_{}", value), value, parts, 1, loc))
             .first;
  return Operand{it->second, {}, parts, 1};
}

// A [1, n] row of ones (the stationary side of a partition broadcast), written once.
Operand Translator::ones_row(std::int64_t n, const SourceLoc& loc) {
  auto it = ones_rows_.find(n);
  if (it == ones_rows_.end())
    it = ones_rows_.emplace(n, memset_tile(fmt::format("ones_{}", n), 1.0, 1, n, loc)).first;
  return Operand{it->second, {}, 1, n};
}

// The loop a PSUM += accumulates across: the one loop between the tile's allocation and here.
int Translator::accumulate_block(Array& a, const SourceLoc& loc) {
  std::vector<int> chain;
  const auto& blocks = builder_.program().blocks;
  for (int b = block_; b != a.block; b = blocks[static_cast<std::size_t>(b)].parent) {
    if (b <= 0)
      throw UserError(
          loc, fmt::format("+= into '{}' from outside the loops it was allocated in", a.name));
    chain.push_back(b);
  }
  if (chain.size() == 1) return chain[0];
  if (chain.empty()) {
    if (a.zeroed) return -1;  // the first write into a zeroed tile
    throw UserError(
        loc, fmt::format(
                 "+= into '{}' outside a loop after it was written; tilesweep accumulates across "
                 "one loop",
                 a.name));
  }
  throw UserError(
      loc, fmt::format(
               "+= into '{}' accumulates across {} nested loops; tilesweep's programs accumulate "
               "across one (merge the loops or accumulate in SBUF)",
               a.name, chain.size()));
}

std::optional<sem::Engine> Translator::engine_of(const Value& v, const SourceLoc& loc) const {
  if (v.kind == Value::Kind::None) return std::nullopt;
  static const std::map<std::string, std::optional<sem::Engine>> kEngines = {
      {"tensor_engine", sem::Engine::Tensor}, {"vector_engine", sem::Engine::Vector},
      {"scalar_engine", sem::Engine::Scalar}, {"gpsimd_engine", sem::Engine::GpSimd},
      {"unknown_engine", std::nullopt},       {"engine.tensor", sem::Engine::Tensor},
      {"engine.vector", sem::Engine::Vector}, {"engine.scalar", sem::Engine::Scalar},
      {"engine.gpsimd", sem::Engine::GpSimd}, {"engine.unknown", std::nullopt}};
  if (v.kind == Value::Kind::Module && v.s.rfind("isa.", 0) == 0) {
    auto it = kEngines.find(v.s.substr(4));
    if (it != kEngines.end()) return it->second;
  }
  throw UserError(
      loc, fmt::format("engine= takes nisa.vector_engine, nisa.scalar_engine, nisa.gpsimd_engine, "
                       "nisa.tensor_engine or nisa.unknown_engine, not {}",
                       describe(v)));
}

}  // namespace ts::nki

// Values in PSUM (GroupTiling::psum_values), a pass over the nest's instructions once they are
// all emitted: S0 runs a Vector tensor_tensor at one element per cycle with one input in PSUM
// and the other in SBUF, at two with both in SBUF. In program order, for each instruction whose
// cost formula is lower with its inputs in PSUM and SBUF (`psum_sbuf`) and whose two inputs are
// both in SBUF, one of them (the second first) moves to PSUM where it can: an fp32 buffer of the
// nest written and read only by compute instructions whose operand lists allow PSUM there, no
// DMA touching it, no reader whose other input is already in PSUM, and each copy at most a
// quarter of PSUM per partition — whatever the depth, so that the values moved are the same at
// every depth (the candidate cursor rebinds depths on one program); a depth whose copies do not
// fit PSUM has no program. Engines that cannot reach PSUM (GpSimd) are then replaced by the
// target's rules (materialize.cpp: make_engine_legal), or the plan has no program.
//
// Loads in PSUM (GroupTiling::psum_loads): no DMA writes PSUM, so where both inputs of such an
// instruction are loaded tiles (rope: x times cos), one of them (the one more such readers read,
// the second on a tie; fp32, loaded whole by one DMA, each copy at most a quarter of PSUM)
// is copied into PSUM right after its load by the Scalar engine's tensor_copy (NeuronCore-v3 on:
// on NeuronCore-v2 tensor_copy does not run there), and every reader that may read PSUM there
// (a compute instruction off the Tensor engine, no other input in PSUM) reads the copy: the
// Scalar engine pays one pass per tile for each reader's half pass on Vector.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "emission.h"
#include "tilesweep/target/instr_cost.h"
#include "tilesweep/target/legality.h"

namespace ts::lower {

namespace {

bool allows_psum(const std::vector<sem::Memory>& m) {
  return m.empty() || std::find(m.begin(), m.end(), sem::Memory::Psum) != m.end();
}

// Cycles of `in` with `psum_sbuf` at 0 and at 1 (the formula with the materializer's variables).
bool faster_with_one_in_psum(const Inst& in) {
  if (in.dma || in.in.size() != 2 || !in.vars.find("psum_sbuf")) return false;
  CostVars v = in.vars;
  v.set("psum_sbuf", 0);
  double general = target::formula_value(*in.spec, v);
  v.set("psum_sbuf", 1);
  return target::formula_value(*in.spec, v) < general;
}

bool movable(const Program& p, const target::Target& t, int buffer) {
  const Buffer& b = p.buffers[static_cast<std::size_t>(buffer)];
  if (b.memory != sem::Memory::Sbuf || b.constant || b.dtype != ir::DType::F32 ||
      b.bytes_per_partition() > t.psum.bytes_per_partition / 4)
    return false;
  for (const Inst& in : p.insts) {
    bool writes = in.out == buffer;
    auto read = std::find(in.in.begin(), in.in.end(), buffer);
    if (!writes && read == in.in.end()) continue;
    if (in.dma || in.engine == sem::Engine::Tensor) return false;
    if (writes && !allows_psum(in.spec->out_memory)) return false;
    for (std::size_t k = 0; k < in.in.size(); ++k) {
      if (in.in[k] != buffer) continue;
      if (k < in.spec->operand_memory.size() && !allows_psum(in.spec->operand_memory[k]))
        return false;
      // Both inputs of a two-input instruction in PSUM would lose the rate (and S0 forbids it).
      for (int other : in.in)
        if (other != buffer &&
            p.buffers[static_cast<std::size_t>(other)].memory == sem::Memory::Psum)
          return false;
    }
  }
  return true;
}

// The target's tensor_copy where it runs on the Scalar engine from SBUF into PSUM; null elsewhere.
const sem::InstrSpec* scalar_copy_into_psum(const target::Target& t) {
  const sem::InstrSpec* spec = t.isa.find("tensor_copy");
  if (!spec || spec->operand_memory.size() > 1 ||
      std::find(spec->engines.begin(), spec->engines.end(), sem::Engine::Scalar) ==
          spec->engines.end() ||
      !allows_psum(spec->out_memory))
    return nullptr;
  const target::ResolvedRules* rules =
      target::resolved_rules(t.legality, *spec, sem::Engine::Scalar);
  return rules && (!rules->reaches(sem::Memory::Psum) || !rules->reaches(sem::Memory::Sbuf))
             ? nullptr
             : spec;
}

// True when instruction `in` may read its operand `k` from PSUM instead of SBUF.
bool may_read_psum(const Program& p, const Inst& in, std::size_t k) {
  if (in.dma || in.engine == sem::Engine::Tensor) return false;
  if (k < in.spec->operand_memory.size() && !allows_psum(in.spec->operand_memory[k])) return false;
  for (std::size_t j = 0; j < in.in.size(); ++j)
    if (j != k && p.buffers[static_cast<std::size_t>(in.in[j])].memory == sem::Memory::Psum)
      return false;
  return true;
}

// The one DMA load writing all of `buffer` (an fp32 SBUF tile of at most a quarter of PSUM), or
// -1.
int whole_load(const Program& p, const target::Target& t, int buffer) {
  const Buffer& b = p.buffers[static_cast<std::size_t>(buffer)];
  if (b.memory != sem::Memory::Sbuf || b.constant || b.dtype != ir::DType::F32 ||
      b.bytes_per_partition() > t.psum.bytes_per_partition / 4)
    return -1;
  int load = -1;
  for (std::size_t i = 0; i < p.insts.size(); ++i) {
    const Inst& in = p.insts[i];
    if (in.out != buffer) continue;
    if (load >= 0 || !in.dma || in.store || !in.out_window.whole()) return -1;
    load = static_cast<int>(i);
  }
  return load;
}

// The readers of `buffer` that may read it from PSUM: (instruction, operand).
std::vector<std::pair<std::size_t, std::size_t>> psum_readers(const Program& p, int buffer) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t i = 0; i < p.insts.size(); ++i) {
    const auto& in = p.insts[i].in;
    if (std::count(in.begin(), in.end(), buffer) > 1) continue;  // x * x: not both from PSUM
    for (std::size_t k = 0; k < in.size(); ++k)
      if (in[k] == buffer && may_read_psum(p, p.insts[i], k)) out.emplace_back(i, k);
  }
  return out;
}

// Copies loaded tile `x` (loaded by instruction `load`) into a new PSUM buffer right after its
// load, with `copy` on the Scalar engine; `readers` read the copy.
void copy_load_into_psum(Program& p, const target::Target& t, const sem::InstrSpec* copy, int x,
                         int load, const std::vector<std::pair<std::size_t, std::size_t>>& readers,
                         bool notes) {
  Buffer b = p.buffers[static_cast<std::size_t>(x)];
  b.memory = sem::Memory::Psum;
  b.name = "ld" + std::to_string(p.buffers.size());
  p.buffers.push_back(std::move(b));
  const int to = static_cast<int>(p.buffers.size()) - 1;
  const Buffer& made = p.buffers.back();
  Inst in;
  in.spec = copy;
  in.engine = sem::Engine::Scalar;
  in.in = {x};
  in.in_window = {Window{}};
  in.out = to;
  const Shape shape(made.shape.begin(), made.shape.end());
  const Shape operands[] = {shape};
  auto v = target::instr_vars(t, *copy, operands, shape, made.dtype);
  in.vars = v.vars;
  in.repeat = v.repeat;
  if (notes) in.note = "copy " + p.buffers[static_cast<std::size_t>(x)].name + " into PSUM";
  p.insts.push_back(std::move(in));
  const int id = static_cast<int>(p.insts.size()) - 1;
  for (Block& blk : p.blocks) {
    auto at = std::find_if(blk.items.begin(), blk.items.end(),
                           [&](const Item& it) { return it.inst == load; });
    if (at == blk.items.end()) continue;
    blk.items.insert(at + 1, Item{id, -1});
    break;
  }
  for (const auto& [i, k] : readers) p.insts[i].in[k] = to;
}

}  // namespace

void place_psum_values(Program& p, const target::Target& t, const ProgramPlan& plan) {
  auto in_nest = [&](int buffer) {
    int g = p.buffers[static_cast<std::size_t>(buffer)].nest;
    return g >= 0 && static_cast<std::size_t>(g) < plan.tiling.size() &&
           plan.tiling[static_cast<std::size_t>(g)].psum_values;
  };
  for (std::size_t i = 0; i < p.insts.size(); ++i) {
    const Inst& in = p.insts[i];
    if (!faster_with_one_in_psum(in)) continue;
    int a = in.in[0], b = in.in[1];
    if (p.buffers[static_cast<std::size_t>(a)].memory != sem::Memory::Sbuf ||
        p.buffers[static_cast<std::size_t>(b)].memory != sem::Memory::Sbuf)
      continue;
    for (int x : {b, a})
      if (in_nest(x) && movable(p, t, x)) {
        p.buffers[static_cast<std::size_t>(x)].memory = sem::Memory::Psum;
        break;
      }
  }
  const sem::InstrSpec* copy = scalar_copy_into_psum(t);
  auto loads_in_nest = [&](int buffer) {
    int g = p.buffers[static_cast<std::size_t>(buffer)].nest;
    return in_nest(buffer) && plan.tiling[static_cast<std::size_t>(g)].psum_loads;
  };
  for (std::size_t i = 0; copy && i < p.insts.size(); ++i) {
    if (!faster_with_one_in_psum(p.insts[i])) continue;
    int a = p.insts[i].in[0], b = p.insts[i].in[1];
    if (p.buffers[static_cast<std::size_t>(a)].memory != sem::Memory::Sbuf ||
        p.buffers[static_cast<std::size_t>(b)].memory != sem::Memory::Sbuf)
      continue;
    int best = -1, load = -1;
    std::vector<std::pair<std::size_t, std::size_t>> readers;
    for (int x : {b, a}) {
      int l = loads_in_nest(x) ? whole_load(p, t, x) : -1;
      if (l < 0) continue;
      auto r = psum_readers(p, x);
      if (r.size() > readers.size()) best = x, load = l, readers = std::move(r);
    }
    if (best >= 0) copy_load_into_psum(p, t, copy, best, load, readers, plan.notes);
  }
}

}  // namespace ts::lower

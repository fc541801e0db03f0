// Values in PSUM (GroupTiling::psum_values), a pass over the nest's instructions once they are
// all emitted: S0 runs a Vector tensor_tensor at one element per cycle with one input in PSUM
// and the other in SBUF, at two with both in SBUF. In program order, for each instruction whose
// cost formula is lower with its inputs in PSUM and SBUF (`psum_sbuf`) and whose two inputs are
// both in SBUF, one of them (the second first) moves to PSUM where it can: an fp32 buffer of the
// nest written and read only by compute instructions whose operand lists allow PSUM there, no
// DMA touching it, no reader whose other input is already in PSUM, and at most a quarter of
// PSUM per partition with its copies. Engines that cannot reach PSUM (GpSimd) are then replaced
// by the target's rules (materialize.cpp: make_engine_legal), or the plan has no program.
#include <algorithm>

#include "emission.h"
#include "tilesweep/target/instr_cost.h"

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
      b.bytes_per_partition() * b.bufs > t.psum.bytes_per_partition / 4)
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
}

}  // namespace ts::lower

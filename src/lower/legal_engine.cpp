#include "tilesweep/lower/legal_engine.h"

#include <fmt/format.h>

#include "tilesweep/base/small_vector.h"
#include "tilesweep/lower/reduction_fusion.h"

namespace ts::lower {

namespace {

// True when `in` on `engine` is known to keep the rules from the resolved memory bits alone (most
// instructions on most engines have only memories to check): no call, no operand list.
bool only_memories_and_reached(const Program& p, const Inst& in, sem::Engine engine,
                               const target::Legality& l) {
  const target::ResolvedRules* r = target::resolved_rules(l, *in.spec, engine);
  if (!r || !r->operators.empty() || !r->requirements.empty()) return false;
  bool reached = in.out < 0 || r->reaches(p.buffers[static_cast<std::size_t>(in.out)].memory);
  for (int b : in.in)
    reached = reached && r->reaches(p.buffers[static_cast<std::size_t>(b)].memory);
  return reached;
}

// The memories of `in`'s operands and result, for the rules' checks.
struct Memories {
  SmallVector<sem::Memory, 3> operands;
  const sem::Memory* out = nullptr;
  Memories(const Program& p, const Inst& in) {
    for (int b : in.in) operands.push_back(p.buffers[static_cast<std::size_t>(b)].memory);
    if (in.out >= 0) out = &p.buffers[static_cast<std::size_t>(in.out)].memory;
  }
};

// breach_on's answer without the message (trying engines: a breach is common, its text unused).
bool keeps_rules_on(const Program& p, const Inst& in, sem::Engine engine,
                    const target::Legality& l) {
  if (in.dma || only_memories_and_reached(p, in, engine, l)) return true;
  Memories m(p, in);
  return target::keeps_rules(l, *in.spec, engine, {m.operands.data(), m.operands.size()}, m.out,
                             in.attrs);
}

}  // namespace

target::Breach breach_on(const Program& p, const Inst& in, sem::Engine engine,
                         const target::Legality& l) {
  if (in.dma || only_memories_and_reached(p, in, engine, l)) return {};
  Memories m(p, in);
  return target::check_instruction(l, *in.spec, engine, {m.operands.data(), m.operands.size()},
                                   m.out, in.attrs);
}

std::optional<NoProgram> make_engine_legal(const Program& p, Inst& in, const target::Legality& l) {
  if (keeps_rules_on(p, in, in.engine, l)) return std::nullopt;
  for (sem::Engine e : in.spec->engines)
    if (e != in.engine && keeps_rules_on(p, in, e, l)) {
      in.engine = e;
      return std::nullopt;
    }
  return NoProgram{fmt::format("no engine of {} keeps the target's rules: {}", in.spec->op.name,
                               breach_on(p, in, in.engine, l).why)};
}

std::vector<InstBreach> legality_breaches(const Program& p, const target::Legality& l) {
  std::vector<InstBreach> out;
  for (std::size_t i = 0; i < p.insts.size(); ++i) {
    if (target::Breach b = breach_on(p, p.insts[i], p.insts[i].engine, l))
      out.push_back({static_cast<int>(i), std::move(b)});
    if (p.insts[i].rides < 0) continue;
    // A rider runs as its fused instruction on its carrier's engine (reduction_fusion.h).
    Inst f = fused_instruction(p, static_cast<int>(i));
    if (target::Breach b = breach_on(p, f, f.engine, l))
      out.push_back({static_cast<int>(i), std::move(b)});
  }
  return out;
}

}  // namespace ts::lower

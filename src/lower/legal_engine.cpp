#include "tilesweep/lower/legal_engine.h"

#include <fmt/format.h>

#include "tilesweep/base/small_vector.h"

namespace ts::lower {

target::Breach breach_on(const Program& p, const Inst& in, sem::Engine engine,
                         const target::Legality& l) {
  if (in.dma) return {};
  // Most instructions on most engines only have memories to check: done here without a call.
  if (const target::ResolvedRules* r = target::resolved_rules(l, *in.spec, engine);
      r && r->operators.empty() && r->requirements.empty()) {
    bool reached = in.out < 0 || r->reaches(p.buffers[static_cast<std::size_t>(in.out)].memory);
    for (int b : in.in)
      reached = reached && r->reaches(p.buffers[static_cast<std::size_t>(b)].memory);
    if (reached) return {};
  }
  SmallVector<sem::Memory, 3> operands;
  for (int b : in.in) operands.push_back(p.buffers[static_cast<std::size_t>(b)].memory);
  const sem::Memory* out =
      in.out >= 0 ? &p.buffers[static_cast<std::size_t>(in.out)].memory : nullptr;
  return target::check_instruction(l, *in.spec, engine, {operands.data(), operands.size()}, out,
                                   in.attrs);
}

std::optional<NoProgram> make_engine_legal(const Program& p, Inst& in, const target::Legality& l) {
  if (in.dma || !breach_on(p, in, in.engine, l)) return std::nullopt;
  for (sem::Engine e : in.spec->engines)
    if (e != in.engine && !breach_on(p, in, e, l)) {
      in.engine = e;
      return std::nullopt;
    }
  return NoProgram{fmt::format("no engine of {} keeps the target's rules: {}", in.spec->op.name,
                               breach_on(p, in, in.engine, l).why)};
}

std::vector<InstBreach> legality_breaches(const Program& p, const target::Legality& l) {
  std::vector<InstBreach> out;
  for (std::size_t i = 0; i < p.insts.size(); ++i)
    if (target::Breach b = breach_on(p, p.insts[i], p.insts[i].engine, l))
      out.push_back({static_cast<int>(i), std::move(b)});
  return out;
}

}  // namespace ts::lower

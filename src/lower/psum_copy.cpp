#include "tilesweep/lower/psum_copy.h"

#include <algorithm>

#include "tilesweep/target/legality.h"

namespace ts::lower {

const sem::InstrSpec* scalar_psum_copy(const target::Target& t, const sem::InstrSpec& copy) {
  auto runs_on_scalar = [](const sem::InstrSpec& in) {
    return std::find(in.engines.begin(), in.engines.end(), sem::Engine::Scalar) != in.engines.end();
  };
  if (runs_on_scalar(copy)) return nullptr;  // tensor_copy itself moves there (NeuronCore-v3 on)
  const sem::InstrSpec* spec = t.isa.find("activation");
  if (!spec || spec->op.operands.size() != 2) return nullptr;
  const sem::AttrSpec* func = spec->op.attr("func");
  if (!func || std::find(func->choices.begin(), func->choices.end(), "copy") == func->choices.end())
    return nullptr;
  if (!runs_on_scalar(*spec)) return nullptr;
  const target::ResolvedRules* rules =
      target::resolved_rules(t.legality, *spec, sem::Engine::Scalar);
  if (rules && (!rules->reaches(sem::Memory::Psum) || !rules->reaches(sem::Memory::Sbuf)))
    return nullptr;
  auto reads = [&](std::size_t operand, sem::Memory m) {
    const auto& allowed = spec->operand_memory[operand];
    return allowed.empty() || std::find(allowed.begin(), allowed.end(), m) != allowed.end();
  };
  const auto& out = spec->out_memory;
  bool writes_sbuf =
      out.empty() || std::find(out.begin(), out.end(), sem::Memory::Sbuf) != out.end();
  return reads(0, sem::Memory::Psum) && reads(1, sem::Memory::Sbuf) && writes_sbuf ? spec : nullptr;
}

bool has_psum_copy_forms(const Program& p, const Inst& in) {
  return in.scalar_bias >= 0 && p.psum_copy_scalar && p.psum_copy_vector &&
         (in.spec == p.psum_copy_scalar || in.spec == p.psum_copy_vector);
}

bool offers_scalar_copies(const Program& p) {
  return std::any_of(p.insts.begin(), p.insts.end(),
                     [&](const Inst& in) { return has_psum_copy_forms(p, in); });
}

void set_psum_copy_form(const Program& p, Inst& in, int copies) {
  int x = in.in[0];
  Window w = in.in_window.empty() ? Window{} : in.in_window[0];
  in.in = {x};
  in.in_window = {w};
  if (copies < kScalarPsumCopies) {
    in.spec = p.psum_copy_vector;
    in.engine = in.spec->engines.front();
    in.attrs.clear();
    return;
  }
  in.spec = p.psum_copy_scalar;
  in.engine = sem::Engine::Scalar;
  in.in.push_back(in.scalar_bias);
  in.in_window.push_back(Window{});
  in.attrs = {{"func", std::string("copy")}, {"scale", 1.0}};
}

}  // namespace ts::lower

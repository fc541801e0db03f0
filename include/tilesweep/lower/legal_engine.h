// The target's legality rules (target::Legality, from isa.toml [legality]) applied to programs: the
// engine each instruction runs on is one that keeps the rules (the candidate's pick when it
// does, else the first of the instruction's engines that does), and a built program can be checked
// instruction by instruction.
#pragma once

#include <optional>
#include <vector>

#include "tilesweep/lower/lowered.h"
#include "tilesweep/lower/program.h"
#include "tilesweep/target/legality.h"

namespace ts::lower {

// What instruction `in` of `p` breaks on `engine` (its operands' and result's memories, its
// attributes); a DMA breaks nothing here.
target::Breach breach_on(const Program& p, const Inst& in, sem::Engine engine,
                         const target::Legality& l);

// Sets `in.engine` to a legal engine: kept when legal, else the first legal one of its spec's
// engines. NoProgram when none is (the candidate cannot be built on this target).
std::optional<NoProgram> make_engine_legal(const Program& p, Inst& in, const target::Legality& l);

// Every instruction of `p` that breaks a rule, with what it breaks.
struct InstBreach {
  int inst = -1;
  target::Breach breach;
};
std::vector<InstBreach> legality_breaches(const Program& p, const target::Legality& l);

}  // namespace ts::lower

// The NKI emitter: prints a candidate program as the source of an NKI kernel (Python, for the
// value-returning neuronxcc.nki API), so that a shape library entry carries code that runs the
// configuration the simulator scored. Each instruction becomes the call its isa.toml `nki`
// template describes; nothing here knows one instruction from another.
#pragma once

#include <string>
#include <vector>

#include "tilesweep/lower/program.h"

namespace ts::lower {

// Emits `p` as an `@nki.jit` function taking `param_names` (one per kernel parameter, in order):
// output tensors in shared HBM, each on-chip buffer declared as a tile in the innermost loop
// that encloses all its uses, loops as nl.affine_range (nl.sequential_range where an instruction
// accumulates across the loop, its PSUM tile zeroed before it), DMAs as the instruction's call on
// slices of the HBM tensors (`.T` where the access and the instruction disagree on orientation,
// `.reshape(..).broadcast_to(..)` for broadcast dims), every line commented with Inst::note.
// Deterministic. UserError for an instruction without an `nki` template; InternalError for a
// malformed program (see validate()) or too few parameter names.
std::string emit_nki(const Program& p, const std::vector<std::string>& param_names);

}  // namespace ts::lower

// A copy out of PSUM into SBUF (a matmul accumulator's evacuation, a transpose's result moved to
// SBUF for the next matmul) runs as tensor_copy (Vector on NeuronCore-v2: GpSimd cannot read
// PSUM) or as activation(func='copy') on the Scalar engine (where tensor_copy cannot run there),
// which reads PSUM too (the targets' [legality] memories) and has no Vector's fixed instruction
// overhead. The copies' engine choice of the op the copy belongs to (OpPick::copies(): 0 the first
// form, 1 the Scalar one) picks the form, so the search balances Vector against Scalar with the
// same digit that moves the other copies to their second engine; lower::rebind switches the form in
// place.
#pragma once

#include "tilesweep/lower/program.h"
#include "tilesweep/target/target.h"

namespace ts::lower {

// The activation instruction of `t` that copies a PSUM tile into SBUF on the Scalar engine
// (func 'copy' among its choices, the engine's rules reach both memories); null where none, or
// where `copy` (the target's tensor_copy) runs on Scalar itself (NeuronCore-v3 on: its engine
// choice already moves the copy there).
const sem::InstrSpec* scalar_psum_copy(const target::Target& t, const sem::InstrSpec& copy);

// True when `in` is a copy out of PSUM with both forms (Inst::scalar_bias set).
bool has_psum_copy_forms(const Program& p, const Inst& in);

// Sets copy `in` (has_psum_copy_forms) to its tensor_copy form (copies index 0) or its Scalar
// form (1): instruction, operands, attributes and engine. The cost variables are the same (both
// read one [p, f] tile).
void set_psum_copy_form(const Program& p, Inst& in, int copies_index);

}  // namespace ts::lower

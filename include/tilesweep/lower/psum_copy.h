// A copy out of PSUM into SBUF (a matmul accumulator's evacuation, a transpose's result moved to
// SBUF for the next matmul) runs as tensor_copy (Vector on NeuronCore-v2: GpSimd cannot read
// PSUM) or as activation(func='copy') on the Scalar engine (where tensor_copy cannot run there),
// which reads PSUM too (the targets' [legality] memories) and has no Vector's fixed instruction
// overhead. The copies' choice of the op the copy belongs to (OpPick::copies()) picks the form:
// kScalarPsumCopies (the engine policy digit's third value, offered where a program has such a
// copy) the Scalar one, with the other copies on their second engines; below it tensor_copy. So
// the search balances Vector against Scalar; lower::rebind switches the form in place.
#pragma once

#include "tilesweep/lower/program.h"
#include "tilesweep/target/target.h"

namespace ts::lower {

// The activation instruction of `t` that copies a PSUM tile into SBUF on the Scalar engine
// (func 'copy' among its choices, the engine's rules reach both memories); null where none, or
// where `copy` (the target's tensor_copy) runs on Scalar itself (NeuronCore-v3 on: its engine
// choice already moves the copy there).
const sem::InstrSpec* scalar_psum_copy(const target::Target& t, const sem::InstrSpec& copy);

constexpr int kScalarPsumCopies = 2;

// True when `in` is a copy out of PSUM with both forms (Inst::scalar_bias set).
bool has_psum_copy_forms(const Program& p, const Inst& in);

// True when some instruction of `p` has both forms.
bool offers_scalar_copies(const Program& p);

// Sets copy `in` (has_psum_copy_forms) to its tensor_copy form (copies choice below
// kScalarPsumCopies) or its Scalar form: instruction, operands, attributes and engine. The cost
// variables are the same (both read one [p, f] tile).
void set_psum_copy_form(const Program& p, Inst& in, int copies);

}  // namespace ts::lower

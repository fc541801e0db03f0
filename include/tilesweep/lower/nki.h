// The NKI emitter: prints a candidate program as the source of an NKI kernel (Python), so that a
// shape library entry carries code that runs the configuration the simulator scored. Each
// instruction becomes the call its isa.toml template describes (`nki_current` for the current
// API, `nki` for the legacy one); nothing here knows one instruction from another, except the
// documented rewrites listed at emit_nki.
//
// Two dialects, each using only what its API reference documents:
//  - current (default): the `nki` package of Neuron SDK 2.27+ (NKI 0.2+). Followed: the NKI
//    migration guide from Beta 1 to Beta 2 (nki/deep-dives/nki-migration-guide), the nki.isa
//    API stubs with their docstrings (nki/api/nki/isa/__init__.py: every call takes dst= first
//    and returns nothing, memset(dst, value, engine), nc_matmul(..., accumulate=),
//    engines as nki.isa.engine.*), nki.language (ndarray, shared_hbm, sbuf, psum); loops are
//    Python `range` (affine_range / sequential_range are deprecated aliases).
//  - legacy: neuronxcc.nki of SDK <= 2.26 (NKI Beta 1): value-returning nisa calls assigned
//    to pre-declared tiles, nl.affine_range / nl.sequential_range, nl.zeros, nl.load_transpose2d
//    (general/nki/api/nki.isa.rst and nki.language.rst of the 2.26 documentation).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/lower/program.h"

namespace ts::lower {

enum class NkiApi { Current, Legacy };
struct NkiShapes;

// "current" / "legacy" -> the dialect; UserError naming `flag` for anything else.
NkiApi parse_nki_api(const std::string& text, const std::string& flag = "--nki-api");
const char* nki_api_name(NkiApi api);

// A kernel parameter as the emitted function takes it.
struct NkiParam {
  std::string name;
  bool scalar = false;                  // a Python number (compile-time constant), not a tensor
  std::optional<double> default_value;  // a scalar's default, written as `name=value`
};

// The parameters of `k` in order (scalars as Python numbers with their defaults).
std::vector<NkiParam> nki_params(const ir::Kernel& k);

// Emits `p` as an `@nki.jit` function taking `params` (one per kernel parameter, in order):
// an assert of every tensor argument's shape first (the kernel is specialized to the shapes it
// was built for), outputs in nl.shared_hbm, each on-chip buffer declared as a tile in the
// innermost loop that encloses all its uses, PSUM tiles in float32 (PSUM accumulates in fp32;
// the instruction reading a tile out casts), an accumulator zeroed before its loop, DMAs as the
// instruction's call on slices of the HBM tensors. Documented rewrites: a load whose access
// transposes becomes dma_transpose (current) / nl.load_transpose2d (legacy), a dma_transpose
// whose access transposes back becomes a dma_copy; a scalar parameter is a memset of its value;
// an unused second ALU operator (op1=add with 0.0, mul with 1.0) is op1=None; a divide is a
// multiplication by the reciprocal (1/F for a constant, nisa.reciprocal of a tile); in the
// current API an accumulation other than nc_matmul's goes through a scratch tile and a
// tensor_tensor add. Every line is commented with Inst::note. Deterministic. UserError for an
// instruction without a template for `api`, or a construct with no documented form (a
// transposing store); InternalError for a malformed program (see validate()) or too few params.
// With `shapes` (nki_shapes.h), the kernel is generic in its generic dims: they are read from
// the arguments' shapes, trip counts and HBM sizes are expressions of them, and the shape
// asserts say what the tiles need (a multiple of the tile); other sizes as built.
std::string emit_nki(const Program& p, const std::vector<NkiParam>& params,
                     NkiApi api = NkiApi::Current, const NkiShapes* shapes = nullptr);

// The same with every parameter a tensor.
std::string emit_nki(const Program& p, const std::vector<std::string>& param_names,
                     NkiApi api = NkiApi::Current);

}  // namespace ts::lower

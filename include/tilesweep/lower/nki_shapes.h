// Emitted NKI generic in the shape: one kernel for a bucket of shapes. A candidate's program is
// rebuilt with one dim changed (a probe); a dim is generic when every probe program has the
// same instructions, on-chip tiles, accesses and windows, and only loop trip counts and HBM
// tensor sizes change, each in proportion to the dim. Those become Python expressions of the
// inputs' shapes (`M = x.shape[0]`, `range(M // 128)`), with the divisibility they need
// asserted; every other dim stays fixed and asserted. What the emitter prints with them is
// emit_nki(..., const NkiShapes*).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/lower/program.h"
#include "tilesweep/semantics/dim.h"

namespace ts::lower {

// The program of the same candidate with one dim at another value.
struct ShapeProbe {
  std::string dim;
  std::int64_t value = 0;  // the dim's value in `program`
  Program program;
};

// Python expressions for the sizes that vary with the generic dims.
struct NkiShapes {
  std::vector<std::pair<std::string, std::string>> defs;  // name = expression, e.g. M = x.shape[0]
  std::vector<std::string> asserts;                       // Python conditions over those names
  std::map<int, std::string> trips;                       // block -> trip count
  std::map<int, std::vector<std::string>> hbm_shape;  // HBM buffer -> size of each dim ("" = fixed)
  std::vector<std::string> generic;                   // the generic dims, as named in the kernel
  std::vector<std::string> fixed;                     // "K: why" for each dim kept fixed
};

// The generic form of `p` (built at `dims`) from its probes; `param_names` names the buffers of
// kernel parameters (the emitted function's arguments). A dim is generic when its probe has the
// same structure, every size it changes changes in proportion (v * D / D0) and some tensor
// argument has a dim of exactly that size (where the kernel reads it from). Dims without a
// probe, or failing one of these, are fixed (NkiShapes::fixed says why).
NkiShapes generic_shapes(const Program& p, const sem::DimEnv& dims,
                         const std::vector<ShapeProbe>& probes,
                         const std::vector<std::string>& param_names);

// Candidate `index` of `from` rebuilt in `to`, a space of the same variants, target and options
// at other dims: the same variant and form, lowerings, engines and tiles. nullopt (with `why`)
// when that combination has no program there or picks other instructions.
std::optional<Program> rebuild(const CandidateSpace& from, std::int64_t index,
                               const CandidateSpace& to, std::string* why);

// One space per dim at twice its value (a probe space), or a reason it has none.
struct ProbeSpace {
  std::string dim;
  std::int64_t value = 0;
  std::optional<CandidateSpace> space;
  std::string why;  // when `space` is empty
};

// Probes of candidate `index` of `space` in each probe space; `fixed` gets "D: why" for the
// dims without one.
std::vector<ShapeProbe> shape_probes(const CandidateSpace& space, std::int64_t index,
                                     const std::vector<ProbeSpace>& at,
                                     std::vector<std::string>* fixed);

}  // namespace ts::lower

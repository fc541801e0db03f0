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

// A loop over the tiles of a generic dim whose last tile may be partial: it runs
// ceil(dim / tile) times and its DMAs move only the rows or columns inside the tensor. With
// `zero_fill` the lanes past the end are contracted (a matmul's k): each load along the loop
// zeroes its tile first, so they add nothing.
struct PartialLoop {
  std::string dim;  // the generic dim as named in the kernel (a Python name)
  std::int64_t tile = 0;
  bool zero_fill = false;
};

// Python expressions for the sizes that vary with the generic dims.
struct NkiShapes {
  std::vector<std::pair<std::string, std::string>> defs;  // name = expression, e.g. M = x.shape[0]
  std::vector<std::string> asserts;                       // Python conditions over those names
  std::map<int, std::string> trips;                       // block -> trip count
  std::map<int, std::vector<std::string>> hbm_shape;  // HBM buffer -> size of each dim ("" = fixed)
  std::vector<std::string> generic;                   // the generic dims, as named in the kernel
  std::vector<std::string> fixed;                     // "K: why" for each dim kept fixed
  std::map<int, PartialLoop> partial;                 // block -> its possibly partial last tile
  std::map<std::string, std::int64_t> multiple;  // generic dim (as in `generic`) -> the multiple
                                                 // its sizes need (1: any size)
  std::vector<std::string> partial_dims;         // generic dims with no divisibility asserted
};

// The generic form of `p` (built at `dims`) from its probes; `param_names` names the buffers of
// kernel parameters (the emitted function's arguments). A dim is generic when its probe has the
// same structure, every size it changes changes in proportion (v * D / D0) and some tensor
// argument has a dim of exactly that size (where the kernel reads it from). Dims without a
// probe, or failing one of these, are fixed (NkiShapes::fixed says why). A loop over tiles of a
// generic dim gets a partial last tile instead of a divisibility assert when that is safe: every
// DMA it indexes moves a plain tile (one tensor dim per tile dim, step = extent = tile), and the
// lanes past the end (traced from the loads through each instruction's pattern dims to the
// stores) are either never reduced, or reach only sums of products over them (a matmul's
// contraction, accumulated across the loop) through instructions that move data unchanged
// (copies, transposes), every factor zero-filled at its load (PartialLoop::zero_fill).
NkiShapes generic_shapes(const Program& p, const sem::DimEnv& dims,
                         const std::vector<ShapeProbe>& probes,
                         const std::vector<std::string>& param_names);

// Whether the kernel of `shapes` (built at `built`) takes the shape `asked`: the same dims, each
// fixed one equal, each generic one at least 1 and a multiple of what it needs; else `why`.
bool takes_shape(const NkiShapes& shapes, const sem::DimEnv& built, const sem::DimEnv& asked,
                 std::string* why);

// The loops of `candidates` (block -> the generic dim it steps through by whole tiles) that may
// end on a partial tile, by the rule at generic_shapes; `hbm_shape` gives each HBM buffer's
// sizes as expressions (NkiShapes::hbm_shape), a DMA's dim must be exactly the generic dim.
std::map<int, PartialLoop> partial_loops(const Program& p, std::map<int, PartialLoop> candidates,
                                         const std::map<int, std::vector<std::string>>& hbm_shape);

// Candidate `index` of `from` rebuilt in `to`, a space of the same variants, target and options
// at other dims: the same variant and form, lowerings, engines and tiles. nullopt (with `why`)
// when that combination has no program there or picks other instructions.
std::optional<Program> rebuild(const CandidateSpace& from, std::int64_t index,
                               const CandidateSpace& to, std::string* why);
std::optional<Program> rebuild(const CandidateSpace& from, const Candidate& c,
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
std::vector<ShapeProbe> shape_probes(const CandidateSpace& space, const Candidate& c,
                                     const std::vector<ProbeSpace>& at,
                                     std::vector<std::string>* fixed);

// The probe spaces of a space of `variants` on `t` at `dims` with `options`: each dim at twice
// its value (built once, shared by every candidate's generic_form).
std::vector<ProbeSpace> probe_spaces(const std::vector<SpaceVariant>& variants,
                                     const target::Target& t, const sem::DimEnv& dims,
                                     const SpaceOptions& options);

// The generic form of `p`, candidate `c` of `space` (at `dims`): its probes in `at`, then
// generic_shapes; what `lower`, `score --emit-nki`, `select --nki-dir` and `lookup --nki` emit.
NkiShapes generic_form(const CandidateSpace& space, const Candidate& c, const Program& p,
                       const sem::DimEnv& dims, const std::vector<ProbeSpace>& at,
                       const std::vector<std::string>& param_names);

}  // namespace ts::lower

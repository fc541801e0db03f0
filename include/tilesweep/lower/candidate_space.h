// The candidate space of one (kernel, target, shape): algebraic variants x fusion choice (unfused,
// fused, fused with swap sites computed transposed: layout_swap.h) x
// instruction choice per op x engine choice (one policy for all ops, or per op) x
// multi-buffering depth x instruction fusion (fused forms) x tile configuration per fused group
// (row block, free tile). Its size is known without materializing anything, and candidate i is
// decoded and materialized alone (mixed-radix digits inside one section per (variant, fusion),
// innermost the engine policy and the depth, which leave the program's structure alone: see
// CandidateCursor), so a sweep partitions it by index. Tile configurations that cannot fit
// SBUF/PSUM are pruned when the space is built; in a fused form such a configuration is kept
// with its nest's matmul results spilled to HBM (GroupTiling::spill) when that fits.
//
// Thread-safety: const methods may run concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tilesweep/lower/instruction_choices.h"
#include "tilesweep/lower/materialize.h"

namespace ts::lower {

struct SpaceOptions {
  int max_block = 8;      // row tiles per strip, up to
  int max_lowerings = 3;  // distinct instruction sequences kept per op, cheapest first
  double max_instruction_choices = 64;  // lowering combinations per section, at most
  std::vector<int> bufs = {1, 2, 3};
  bool fusion = true;  // offer fused groups (the unfused form is always offered)
  // Engine choice: false, one policy for the whole candidate (every instruction on its first
  // engine, or every one on its second where it has one); true, that choice per op for its
  // instructions, and the policy for the copies around the ops (a superset of the policy's).
  bool engines_per_op = false;
  // NeuronCores a candidate may split its top-level loops over, at most: the space offers 1, 2,
  // 4, .. and `cores` (core_split.h), and a split whose program has no such form has no program.
  int cores = 1;
  // In-place writes (GroupTiling::in_place) offered where they let a nest fit deeper; off only
  // to compare against.
  bool in_place = true;
  // Software-pipelined twins (GroupTiling::pipeline) offered where a nest has a loop to pipeline.
  bool pipeline = true;
  // On-chip steps (GroupTiling::onchip_steps) offered where a nest reads a slice with a step;
  // off only to compare against.
  bool onchip_steps = true;
  // Operands in PSUM (GroupTiling::pe_broadcast, psum_partials, psum_values, psum_loads) offered
  // where a nest reads an HBM operand broadcast across its partitions, folds a partial into a
  // batch reduction or reads two SBUF inputs (computed or loaded) in an instruction faster with
  // one in PSUM.
  bool psum_operands = true;
};

// One variant of the kernel with its instruction choices.
struct SpaceVariant {
  const ir::Kernel* kernel = nullptr;
  const KernelChoices* choices = nullptr;
};

struct Candidate {
  int variant = 0;
  bool fused = false;
  int section = 0;
  std::vector<int> lowering;  // per compute op (in KernelChoices order)
  int engines = 0;            // 0: each instruction's first engine; 1: its second where it has one
  std::vector<int>
      op_engines;  // per compute op (engines_per_op; `engines` then the copies'), else empty
  int bufs = 2;    // multi-buffering depth of every strip buffer
  bool instruction_fusion = false;  // fusable (element-wise, reduction) pairs as one instruction
  int cores = 1;                    // NeuronCores its top-level loops are split over
  std::vector<GroupTiling> tiling;  // per group
};

struct SpaceCounts {
  std::int64_t variants = 0, lowered_variants = 0;
  double instruction_choices = 0;        // summed over sections: lowering x engine combinations
  double tile_configs = 0;               // summed over sections: before capacity pruning
  std::int64_t candidates = 0;           // after pruning: size()
  std::vector<std::string> unsupported;  // why a variant or fusion form has no program
};

class CandidateSpace {
 public:
  CandidateSpace(std::vector<SpaceVariant> variants, const target::Target& target, sem::DimEnv dims,
                 const SpaceOptions& options = {});

  std::int64_t size() const { return size_; }
  const SpaceCounts& counts() const { return counts_; }
  const target::Target& target() const { return target_; }
  Candidate decode(std::int64_t index) const;
  void decode(std::int64_t index, Candidate& into) const;  // reusing `into`'s storage
  std::string describe(std::int64_t index) const;          // the candidate's configuration in words
  // The candidates that differ from `index` in one choice: its engine policy, depth, core count,
  // one op's lowering (and engine), instruction fusion, or one group's tiling (unfused: the one
  // tiling policy); in increasing order. Good candidates have good neighbours (a descent from
  // them finds better ones: sweep/prune.h).
  std::vector<std::int64_t> neighbours(std::int64_t index) const;
  // The program of candidate `index` (its `config` left empty: describe() fills it when needed),
  // or NoProgram (with the reason) when this combination has none at the shape.
  Lowered<Program> materialize(std::int64_t index) const;
  Lowered<Program> materialize(const Candidate& c) const;
  Lowered<Program> materialize(const Candidate& c,
                               const ProgramPlan& plan) const;  // from plan(c), perhaps edited
  // What materialize(c) builds the program from; the second form overwrites `into` in place.
  ProgramPlan plan(const Candidate& c) const;
  void plan(const Candidate& c, ProgramPlan& into) const;

  // What a fixed-heuristic compiler builds: the original kernel, unfused, the cheapest
  // lowering per op, default engines, 128 x 512 tiles, block 1, double buffering. nullopt
  // when the original has no program (no section, or none with these tiles).
  std::optional<Program> heuristic() const;

  // Index ranges [first, last) of the sections for ablations: the original variant only, or
  // unfused forms only.
  struct Section {
    int variant = 0;
    bool fused = false;
    std::int64_t first = 0, size = 0;
    bool swapped = false;  // fused, with swap sites computed transposed (layout_swap.h)
  };
  std::vector<Section> sections() const;
  // The kernel of variant `v` (Candidate::variant): a given variant, or after them the folded
  // forms of those that fold (partition_fold.h).
  const ir::Kernel& variant_kernel(int v) const;

 private:
  // A section (one variant in one form) and its parts, built by the stages of the constructor:
  // op_lowerings (per variant) -> section (groups, prefix, lowerings kept, feasible tilings,
  // instruction pairs, engine axes).
  struct SectionForm;
  struct OpLowerings;
  struct InstructionPairs;
  struct EngineAxes;
  struct SpaceSection;
  std::optional<OpLowerings> op_lowerings(int variant);
  std::optional<SpaceSection> section(int variant, int form, const OpLowerings& ops,
                                      std::vector<std::vector<int>>& unfused);
  bool apply_swaps(SpaceSection& s, const KernelChoices& kc) const;
  std::optional<NoProgram> drop_unplaceable(SpaceSection& s, const ir::Kernel& k,
                                            ProgramPlan& plan) const;
  void cap_lowerings(SpaceSection& s) const;
  // `values_plan`: the plan with picks that read PSUM faster, for psum-values twins.
  Lowered<std::vector<std::vector<GroupTiling>>> feasible_tilings(
      const ir::Kernel& k, bool fused, const ProgramPlan& plan, const ProgramPlan& values_plan,
      const std::vector<std::vector<GroupTiling>>& all) const;
  // True when tiling `t` of group `g` (materialized: `plain`) also pays with its element-wise
  // results written in place (GroupTiling::in_place); `deepest`: a tiling's deepest fitting
  // depth (an index into the depths, -1: none).
  bool in_place_pays(const ir::Kernel& k, const ProgramPlan& plan, std::size_t g,
                     const GroupTiling& t, const Program& plain,
                     const std::function<int(GroupTiling)>& deepest) const;
  // Whether tiling t of group g has a software-pipelined twin that fits (fits_pipelined).
  bool fits_pipelined(const ir::Kernel& k, const ProgramPlan& plan, std::size_t g,
                      const GroupTiling& t) const;
  // Tiling `t` of group `g` with operands in PSUM where Vector reads them faster: its partition
  // broadcasts on the PE (GroupTiling::pe_broadcast), its batch reductions' partials in PSUM
  // (GroupTiling::psum_partials), both, values moved to PSUM (GroupTiling::psum_values) and those
  // with loads copied there too (GroupTiling::psum_loads); each where the nest has such an
  // operand with the plan's picks (values and loads: or `values_plan`'s, each op's first lowering
  // faster with an operand in PSUM) and the twin fits.
  std::vector<GroupTiling> psum_operand_twins(const ir::Kernel& k, const ProgramPlan& plan,
                                              const ProgramPlan& values_plan, std::size_t g,
                                              const GroupTiling& t) const;
  // Tiling `t` of group `g` with its stepped slices read on chip (GroupTiling::onchip_steps),
  // where the nest reads one, the twin's program reads a strided window and fits; else nullopt.
  std::optional<GroupTiling> onchip_steps_twin(const ir::Kernel& k, const ProgramPlan& plan,
                                               std::size_t g, const GroupTiling& t) const;
  InstructionPairs instruction_pairs(const SpaceSection& s, const KernelChoices& kc) const;
  Lowered<EngineAxes> engine_axes(const SpaceSection& s, const ir::Kernel& k,
                                  const ProgramPlan& plan) const;
  std::optional<SpaceSection> no_section(int variant, const SpaceSection& s, const NoProgram& why);
  static std::int64_t tiling_radix(const SpaceSection& s);
  std::vector<std::int64_t> digit_radices(const SpaceSection& s) const;
  std::size_t section_at(std::int64_t index) const;
  static std::int64_t choice_radix(const SpaceSection& s);
  static const char* form_name(const SpaceSection& s);

  std::vector<SpaceVariant> variants_;  // the given ones, then their folded forms
  std::vector<std::unique_ptr<const ir::Kernel>> folded_;
  const target::Target& target_;
  sem::DimEnv dims_;
  SpaceOptions options_;
  std::vector<SpaceSection> sections_;
  std::int64_t size_ = 0;
  SpaceCounts counts_;

 public:
  ~CandidateSpace();
  CandidateSpace(CandidateSpace&&) noexcept;
};

}  // namespace ts::lower

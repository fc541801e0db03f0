// The shape-independent half of a search, done once per (kernel, target): the proved algebraic
// variants (operator propagation) and the proved instruction lowerings of every op of every
// variant (ISA synthesis). Everything per shape (tiling, candidates, scores) builds on it.
#pragma once

#include <vector>

#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/lower/instruction_choices.h"
#include "tilesweep/mutate/propagate.h"

namespace ts::sweep {

struct PrepareOptions {
  mutate::PropagateOptions propagate;
  lower::SynthesisOptions synthesis;
};

struct PreparedKernel {
  mutate::VariantSet variants;
  std::vector<lower::KernelChoices> choices;  // per variant; points into the SynthesisCache
  double propagate_ms = 0, synthesis_ms = 0;

  // The candidate space's view; valid while this object and the cache live and do not move.
  std::vector<lower::SpaceVariant> space_variants() const;
  // Every variant's kernel (the attainable bound's scarce term is the least over them).
  std::vector<const ir::Kernel*> variant_kernels() const;
};

// `cache` and `verdicts` are shared across kernels and targets' calls (thread-safe); the
// result points into `cache`.
// The instruction-choice half alone, for variants already proved (they do not depend on the
// target, so one VariantSet serves every target).
PreparedKernel prepare_choices(mutate::VariantSet variants, const sem::InstrTable& isa,
                               lower::SynthesisCache& cache, const PrepareOptions& options = {},
                               verify::VerdictCache* verdicts = nullptr);

PreparedKernel prepare_kernel(const ir::Kernel& k, const sem::InstrTable& isa,
                              lower::SynthesisCache& cache, const PrepareOptions& options = {},
                              verify::VerdictCache* verdicts = nullptr);

}  // namespace ts::sweep

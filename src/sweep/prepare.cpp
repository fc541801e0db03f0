#include "tilesweep/sweep/prepare.h"

#include <chrono>

namespace ts::sweep {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::vector<lower::SpaceVariant> PreparedKernel::space_variants() const {
  std::vector<lower::SpaceVariant> out;
  for (std::size_t v = 0; v < variants.variants.size(); ++v)
    out.push_back({&variants.variants[v].kernel, &choices[v]});
  return out;
}

std::vector<const ir::Kernel*> PreparedKernel::variant_kernels() const {
  std::vector<const ir::Kernel*> out;
  for (const auto& v : variants.variants) out.push_back(&v.kernel);
  return out;
}

PreparedKernel prepare_choices(mutate::VariantSet variants, const sem::InstrTable& isa,
                               lower::SynthesisCache& cache, const PrepareOptions& options,
                               verify::VerdictCache* verdicts) {
  PreparedKernel p;
  p.variants = std::move(variants);
  auto t0 = std::chrono::steady_clock::now();
  for (const auto& v : p.variants.variants)
    p.choices.push_back(
        lower::instruction_choices(v.kernel, isa, cache, options.synthesis, verdicts));
  p.synthesis_ms = ms_since(t0);
  return p;
}

PreparedKernel prepare_kernel(const ir::Kernel& k, const sem::InstrTable& isa,
                              lower::SynthesisCache& cache, const PrepareOptions& options,
                              verify::VerdictCache* verdicts) {
  auto t0 = std::chrono::steady_clock::now();
  mutate::VariantSet variants = mutate::propagate(k, options.propagate, verdicts);
  double propagate_ms = ms_since(t0);
  PreparedKernel p = prepare_choices(std::move(variants), isa, cache, options, verdicts);
  p.propagate_ms = propagate_ms;
  return p;
}

}  // namespace ts::sweep

#include "tilesweep/sim/cores.h"

#include <algorithm>

#include "tilesweep/base/error.h"

namespace ts::sim {

double hbm_bytes_per_s_per_core(const target::Target& t, int cores) {
  const int c = std::max(1, cores);
  const int stacks = std::max(1, t.chip.hbm_stacks);
  const int per_stack = std::max(1, t.chip.neuron_cores / stacks);
  const int touched = std::min(stacks, (c + per_stack - 1) / per_stack);
  return t.chip.hbm_bytes_per_s / stacks * touched / c;
}

double core_barrier_ns(const target::Target& t, int cores) {
  int rounds = 0;
  for (int reach = 1; reach < cores; reach *= 2) ++rounds;
  return rounds * t.overheads.core_barrier_ns;
}

void check_cores(const target::Target& t, int cores, const std::string& what) {
  if (cores < 1 || cores > t.chip.neuron_cores)
    throw UserError(fmt::format("error: {} = {}: {} has {} NeuronCores per chip; give 1 to {}",
                                what, cores, t.name, t.chip.neuron_cores, t.chip.neuron_cores));
}

}  // namespace ts::sim

// Equivalence of kernels over unbounded tensors, decided with Z3 (Axon §5.1). Tensors are
// uninterpreted functions from integer indices to reals, dims are symbolic integers (>= 1, with
// the kernels' preconditions), and each output element is encoded from the op semantics' element
// expressions. Per output: equal shapes, the same elements defined (a division by zero, log of a
// non-positive or sqrt of a negative number makes an element undefined, and undefinedness
// propagates), and equal values wherever defined. Reductions are put in a normal form by sound
// rules (linearity, factoring, splitting a range whose extent is a sum of dims, exp of a sum as a
// product of exps, ...) and then abstracted by their canonical form; tanh, sin, ... are
// uninterpreted.
//
// A model of that abstraction is not yet a counterexample: a NotEquivalent verdict is only
// given with a concrete witness found by the reference interpreter and confirmed far above
// rounding; otherwise the answer is Unknown. Both kernels must accept the same, non-empty set
// of dims.
#pragma once

#include <cstdint>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/verify/cache.h"
#include "tilesweep/verify/verdict.h"

namespace ts::verify {

struct ProveOptions {
  // Wall-clock safety net per solver check, ms. Verdicts never depend on it in normal runs:
  // the budget that decides them is `rlimit` (5M units take about 5 s on an idle core).
  unsigned timeout_ms = 60000;
  // Z3's deterministic resource limit per solver check (Z3 "rlimit" units, counted by the
  // solver's own operations): the same query gets the same verdict on an idle or loaded machine.
  // The hardest rule of tests/verify needs about 0.7M.
  std::uint64_t rlimit = 5'000'000;
  // Parameters of the two kernels are matched by name (any order), as `tilesweep prove` does;
  // false: by position, names ignored (kernels built inside tilesweep, e.g. lowerings).
  bool match_by_name = false;
};

// For each parameter of `b`, the position of the parameter of `a` it is matched to (by name or
// by position). Throws a UserError naming the difference when names (by name), count, ranks or
// symbolic shapes differ.
std::vector<int> match_parameters(const ir::Kernel& a, const ir::Kernel& b, bool by_name);

// Thread-safe: each thread uses its own Z3 context. The kernels must take the same parameters
// (see ProveOptions::match_by_name; same ranks and symbolic shapes); a UserError says which
// differ otherwise. With a cache, the same question (up to renaming) is answered once.
Verdict prove_equivalent(const ir::Kernel& a, const ir::Kernel& b, const ProveOptions& options = {},
                         VerdictCache* cache = nullptr);

}  // namespace ts::verify

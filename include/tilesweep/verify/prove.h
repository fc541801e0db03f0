// Equivalence of kernels over unbounded tensors, decided with Z3 (Axon §5.1). Tensors are
// uninterpreted functions from integer indices to reals, dims are symbolic integers (>= 1, with
// the kernels' preconditions), and each output element is encoded from the op semantics' element
// expressions. Two conditions are checked per output: equal shapes, and equal values at every
// valid index. Reductions are put in a normal form by sound rules (linearity, factoring
// index-invariant terms out, lifting index-invariant conditions, exchanging finite sums) and
// then abstracted by their canonical form; exp, log, sqrt, tanh, ... are uninterpreted.
//
// A model of that abstraction is not yet a counterexample: a NotEquivalent verdict is only
// given with a concrete witness found by the reference interpreter; otherwise the answer is
// Unknown. Division is multiplication by the reciprocal.
#pragma once

#include "tilesweep/ir/graph.h"
#include "tilesweep/verify/cache.h"
#include "tilesweep/verify/verdict.h"

namespace ts::verify {

struct ProveOptions {
  unsigned timeout_ms = 10000;  // per solver query
};

// Thread-safe: each thread uses its own Z3 context. The kernels must take the same parameters
// (same count, ranks and symbolic shapes); a UserError says which differ otherwise. With a
// cache, the same question (up to renaming) is answered once.
Verdict prove_equivalent(const ir::Kernel& a, const ir::Kernel& b, const ProveOptions& options = {},
                         VerdictCache* cache = nullptr);

}  // namespace ts::verify

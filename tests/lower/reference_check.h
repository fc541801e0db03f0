// Test support for the checks on numbers: a kernel prepared for a target (its variants and the
// synthesis cache they point into), and the comparison of a program's outputs with the f64
// reference.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tilesweep/ir/interpreter.h"
#include "tilesweep/lower/synthesize.h"
#include "tilesweep/sweep/prepare.h"
#include "tilesweep/target/target.h"

namespace ts::test {

// Kernel `k` prepared for `t` with at most `max_variants` variants (the cache outlives the
// prepared kernel that points into it).
struct Prepared {
  Prepared(const ir::Kernel& k, const target::Target& t, int max_variants) {
    sweep::PrepareOptions opts;
    opts.propagate.max_variants = max_variants;
    pk = sweep::prepare_kernel(k, t.isa, cache, opts);
  }
  lower::SynthesisCache cache;
  sweep::PreparedKernel pk;
};

// Every element of every output within |out - ref| <= 1e-4 + 1e-4 |ref|; the first that is not,
// when one is not.
inline ::testing::AssertionResult matches(const std::vector<ir::Tensor>& out,
                                          const std::vector<ir::Tensor>& ref) {
  if (out.size() != ref.size())
    return ::testing::AssertionFailure() << out.size() << " outputs, " << ref.size() << " expected";
  for (std::size_t o = 0; o < out.size(); ++o) {
    if (out[o].shape != ref[o].shape)
      return ::testing::AssertionFailure() << "output " << o << " has another shape";
    for (std::int64_t e = 0; e < ref[o].size(); ++e)
      if (std::abs(out[o].data[e] - ref[o].data[e]) > 1e-4 + 1e-4 * std::abs(ref[o].data[e]))
        return ::testing::AssertionFailure() << "output " << o << " element " << e << ": "
                                             << out[o].data[e] << " against " << ref[o].data[e];
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ts::test

// The answer to an equivalence query: proved, refuted with a concrete counterexample, or
// unknown with the reason. Unknown never counts as proved.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tilesweep/semantics/dim.h"

namespace ts::verify {

enum class VerdictKind { Equivalent, NotEquivalent, Unknown };

// A witness that two kernels differ: dims, an output element, and both values.
struct Counterexample {
  sem::DimEnv dims;
  int output = 0;
  std::vector<std::int64_t> index;
  double lhs = 0, rhs = 0;
  std::string note;  // e.g. "output shapes differ" when there is no element to show

  std::string str() const;
};

struct Verdict {
  VerdictKind kind = VerdictKind::Unknown;
  std::string reason;  // Unknown: why (timeout, incomplete theory); NotEquivalent: what differs
  std::optional<Counterexample> counterexample;
  double ms = 0;  // solver time spent (0 when answered from the cache)
  // Z3 resource units (rlimit) of the most expensive solver check: what the budget is compared
  // with, the same on every machine (0 when answered from the cache).
  std::uint64_t rlimit_used = 0;
  bool cached = false;

  bool proved() const { return kind == VerdictKind::Equivalent; }
};

const char* verdict_name(VerdictKind k);  // "equivalent", "not equivalent", "unknown"

}  // namespace ts::verify

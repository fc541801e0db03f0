// Operator propagation (Axon Algorithm 1): every operator is pushed down past its successors,
// with increasing clone degree (how many of its inputs pass through the successor); a swap is
// kept only when Z3 proves it preserves semantics, and propagation continues from the new
// position until no swap applies. Works on any kernel; no rewrite rules are written anywhere.
//
// Budgets are explicit: running out is a StopReason in the result, not an error.
#pragma once

#include <string>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/verify/prove.h"

namespace ts::mutate {

struct PropagateOptions {
  int max_variants = 64;  // variants kept, the original included
  int max_checks = 2000;  // equivalence queries issued
  verify::ProveOptions prove;
};

// One equivalence query: op1 pushed past op2 with `clone_degree` of op1's inputs through op2.
struct SwapProof {
  int from_variant = 0;
  int to_variant = -1;   // -1 when not proved
  std::string op1, op2;  // op names with the user's line numbers, e.g. "mul@3"
  int clone_degree = 0;
  verify::Verdict verdict;
};

struct Variant {
  ir::Kernel kernel;
  std::uint64_t hash = 0;  // structural hash (variants are distinct by it)
  int parent = -1;         // the variant it was derived from; -1 for the original
  std::string step;        // how: "mul@3 past matmul@3 (clone degree 1)"
};

enum class StopReason { Saturated, VariantLimit, CheckLimit };

struct VariantSet {
  std::vector<Variant> variants;  // [0] is the original
  std::vector<SwapProof> proofs;  // every query, in the order issued
  StopReason stop = StopReason::Saturated;
  double proof_ms = 0;
};

const char* stop_reason_name(StopReason r);

// Thread-safe for distinct calls. With a cache, repeated local queries (same ops, attributes
// and operand shapes up to renaming) are answered once.
VariantSet propagate(const ir::Kernel& k, const PropagateOptions& options = {},
                     verify::VerdictCache* cache = nullptr);

}  // namespace ts::mutate

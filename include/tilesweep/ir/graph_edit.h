// Building and rewriting kernel graphs: the one place a node is made from an op (shapes and
// dtypes inferred from the op semantics), dead nodes dropped, common nodes merged, and the
// structural hash that identifies a graph up to node numbering.
#pragma once

#include <cstdint>

#include "tilesweep/ir/graph.h"

namespace ts::ir {

// Appends a node applying `spec` to `inputs` (node ids of k); returns its id. Infers shape and
// dtype, normalizes attributes and adds the instance's shape preconditions to the kernel.
// Throws UserError at `loc` when the operands do not fit the op.
int add_op(Kernel& k, const sem::OpSpec& spec, std::vector<int> inputs, const sem::AttrMap& attrs,
           const SourceLoc& loc);

// Adds a precondition unless an identical one is present.
void add_precondition(Kernel& k, sem::Precondition p);

// Drops nodes no output depends on (parameters stay), merges structurally equal nodes, and
// renumbers in topological order. Node `origin`s are kept.
Kernel compact(const Kernel& k);

// Hash of the node's computation (op, attributes, inputs recursively; parameters by
// position): equal for structurally equal computations however the nodes are numbered.
std::uint64_t node_hash(const Kernel& k, int id, std::vector<std::uint64_t>& memo);
// Hash of the whole kernel (its outputs in order).
std::uint64_t structural_hash(const Kernel& k);

}  // namespace ts::ir

// Index tensors in the lowering: an op with no operands whose elements depend on their position
// (iota) is not a uniform constant the program folds to a number. The ISA descriptions have
// iota and affine_select (nki.isa.iota, nki.isa.affine_select), but their index expressions
// need each tile's position in the tensor, which tile ops (position-free [P, F] computations)
// do not carry: until they do, an index source has no lowering and a kernel with a mask built
// from one has no program (the reason names it).
#pragma once

#include <string>

#include "tilesweep/ir/graph.h"

namespace ts::lower {

// True for a node with no operands whose element expression reads its output index (iota).
bool is_index_source(const ir::Node& n);

// Why an index source has no lowering, for `lower`, `score` and `why`.
std::string index_source_reason(const ir::Node& n);

}  // namespace ts::lower

// Index tensors in the lowering (masks): an op with no operands whose elements depend on their
// position (iota), and every value computed from such ops and constants alone (a causal mask
// `iota(S, axis=1) <= iota(S, axis=0)`), is a *position value*: not a uniform constant the
// program folds to a number, and not a tensor the program computes or stores either. An op that
// reads one computes it inside its own tile form (tile_op.h): each iota becomes the tile's own
// index (p or f) plus the tile's origin along that dim, a dim of the tile op (I for rows, J for
// columns, each the origin plus 1: dims are positive), so synthesis finds the ISA's
// position-dependent instructions (affine_select, iota) with the origin in their offset, proved
// for every origin; materialization fills the origin with the tile's loop terms.
#pragma once

#include <string>

#include "tilesweep/ir/graph.h"

namespace ts::lower {

// True for a node with no operands whose element expression reads its output index (iota).
bool is_index_source(const ir::Node& n);

// True for a value computed from index sources and constants alone, reading at least one index
// source (an iota, a comparison of iotas).
bool is_position(const ir::Kernel& k, int node);

// True for a compute node that reads a position value (a where over a causal mask).
bool reads_positions(const ir::Kernel& k, int node);

// The tile op's dims standing for the tile's origin plus 1 along its rows and its columns.
inline constexpr const char* kRowOrigin = "I";
inline constexpr const char* kColOrigin = "J";

// Why an index source has no tile form of its own, for `lower`, `score` and `why`.
std::string index_source_reason(const ir::Node& n);

}  // namespace ts::lower

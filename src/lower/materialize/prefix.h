// What every program of a kernel at given dims and fusion groups starts with (the Prefix), and
// the lowering programs prepared for emission. Internal to the materialization passes.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "tilesweep/base/small_vector.h"
#include "tilesweep/lower/frame.h"
#include "tilesweep/lower/materialize.h"

namespace ts::lower {

// A value dim as a view of an HBM buffer dim: element i of the value is element
// offset + stride * ((phase + i) // repeat) of base dim `base`; `broadcast` repeats one element.
struct HbmDim {
  int base = -1;
  std::int64_t offset = 0, stride = 1;
  bool broadcast = false;
  std::int64_t repeat = 1;  // np.repeat along this dim
  std::int64_t phase = 0;   // 0 <= phase < repeat: a slice starting inside a repeated group
};
struct HbmView {
  int buffer = -1;
  std::vector<HbmDim> dims;               // per value dim
  std::vector<std::int64_t> base_offset;  // per buffer dim no value dim maps (fixed)
};

// Where a size in a lowering program comes from: dim `dim` of operand `operand`'s tile, or the
// constant `value` (operand -1).
struct Extent {
  int operand = -1, dim = 0;
  std::int64_t value = 0;
};

// One node of a lowering program as emission needs it, worked out once per program (not per
// instruction built): what it is, its instruction, and its shape from the operands' tiles.
struct LoweringNode {
  enum Kind { Operand, Constant, ConstantLayout, Instruction } kind = Instruction;
  const sem::InstrSpec* spec = nullptr;  // Instruction: null when the target lacks it
  std::optional<double> value;           // Constant: its value when no dim decides it
  std::optional<Extent> value_dim;       // Constant: the operand dim that is its value
  bool reciprocal = false;               // Constant: 1 / its input (a constant), folded at emission
  std::vector<Extent> shape;
  bool resolved = false;  // `shape` holds every dim; else they are evaluated from the bound dims
};
struct PreparedLowering {
  std::vector<LoweringNode> nodes;
};

// A dim's canonical key is the symbol's name when it is a bare symbol, and no other dim's key is
// an identifier (constants are digits, compound sizes carry operators): no symbol list needed.
bool bare_symbol(const sem::Dim& d);
PreparedLowering prepare_lowering(const ir::Kernel& lowering, const sem::InstrTable& isa);

// An output that no in-place placement stores (a slice, a broadcast, a view of a value other ops
// also read): copied tile by tile through SBUF after every group's nest (output_copy.cpp), read
// through `from` (a view of the value's HBM tensor) and written through `to` (the output's
// tensor, or an alias of it in `from`'s shape), both in `shape`.
struct CopiedOutput {
  int node = -1;
  HbmView from, to;
  std::vector<std::int64_t> shape;
};

struct Prefix {
  Program program;                                // the HBM tensors and the top-level block
  std::vector<std::vector<std::int64_t>> shapes;  // per kernel node, concrete
  std::vector<std::optional<HbmView>> views;      // per node: its HBM view, if any
  std::vector<std::optional<double>> consts;      // per node: its folded value, if constant
  std::vector<int> group_of;                      // per node: its fusion group (-1: none)
  std::vector<Frame> frames;  // per node: find_frame's, rank -1 where it has none
  // Per node with a frame, facts of the kernel graph that every candidate's emission asks: the
  // role of each operand (operand_role), whether it reduces across rows (reduces_rows) and has
  // an `axis` attribute. Derived once here, not per instruction built.
  std::vector<SmallVector<Role, 3>> roles;
  std::vector<char> reduces_rows, has_axis;
  std::vector<char> reads_mask;  // per node: it reads a mask (index_source.h: reads_positions)
  std::vector<std::pair<const ir::Kernel*, PreparedLowering>>
      lowerings;                     // the section's, by address
  std::vector<CopiedOutput> copies;  // in output order

  const PreparedLowering* lowering(const ir::Kernel* program) const;
  // The frame of `node`, a node of a group or an operand of one (emit_group checked that each
  // has one).
  const Frame& frame(int node) const { return frames[static_cast<std::size_t>(node)]; }
};

// Pass: the prefix of every program of `k` at `dims` with fusion groups `groups` (no lowerings).
Lowered<Prefix> lay_out_hbm(const ir::Kernel& k, const sem::DimEnv& dims,
                            const std::vector<std::vector<int>>& groups);

// Constant folding: the value of a constant node, and of an op over constants.
double constant_value(const ir::Node& n, const sem::DimEnv& env);
Lowered<double> fold_constant(const ir::Kernel& k, int node,
                              const std::vector<std::optional<double>>& consts,
                              const sem::DimEnv& dims);

}  // namespace ts::lower

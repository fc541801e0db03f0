// The cost of ISA instructions from their isa.toml formulas: cycles on the instruction's
// engine, and time for a whole tile program (a lowering) at concrete tile sizes. This is the
// per-instruction part of the simulator; the timeline (overlap, dependencies, DMA queues)
// builds on it.
#pragma once

#include <map>
#include <span>
#include <string>

#include "tilesweep/base/small_vector.h"
#include "tilesweep/ir/graph.h"
#include "tilesweep/semantics/instr_spec.h"
#include "tilesweep/target/cost_vars.h"
#include "tilesweep/target/target.h"

namespace ts::target {

// Evaluates a cost formula. Variables: the instruction's pattern dims (by name), N (free
// elements per partition of the output), P (partitions of the output), MIN_II, fp32 (1 or 0),
// bytes (bytes moved, for DMA). UserError naming the instruction for an unknown variable.
double formula_value(const sem::InstrSpec& in, const CostVars& vars);

// The formula variables of one instruction on concrete tiles, and how many copies it is issued
// as: a tile dim over the instruction's limit (e.g. 32 x 32 for the Vector transpose) is split
// into ceil(size / limit) pieces, each costed at the clipped size. `operands` are the operand
// tile shapes in the instruction's operand order, `out` the result tile.
struct InstrVars {
  CostVars vars;
  int repeat = 1;
};
using TileShape = SmallVector<std::int64_t, 4>;
InstrVars instr_vars(const Target& t, const sem::InstrSpec& in, std::span<const TileShape> operands,
                     std::span<const std::int64_t> out, ir::DType dtype);

// Time in ns of one instruction node of a tile program at the dims `env`, on the first engine
// the instruction allows (DMA: bytes over the core's DMA bandwidth, plus the start latency).
double instr_ns(const Target& t, const ir::Kernel& program, int node, const sem::DimEnv& env);

// Sum of instr_ns over the program's instruction nodes (a serial bound, no overlap).
double program_ns(const Target& t, const ir::Kernel& program, const sem::DimEnv& env);

}  // namespace ts::target

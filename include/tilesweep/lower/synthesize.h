// ISA synthesis (Axon Algorithm 2): for one tile-level op, enumerate sketches of ISA
// instructions up to a depth, fill their holes (operands, function and ALU-op attributes),
// and keep every candidate that Z3 proves equivalent to the op. Instructions are drawn from a
// pool filtered by shared constituent operations, so an exp is never looked for among matmuls.
// A quick numeric comparison with the reference interpreter discards most wrong candidates
// before any proof; only proved candidates are returned.
#pragma once

#include <string>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/semantics/instr_spec.h"
#include "tilesweep/verify/prove.h"

namespace ts::lower {

struct SynthesisOptions {
  int max_depth = 2;           // instructions per sketch (isa_depth)
  int max_candidates = 20000;  // complete, well-shaped candidates examined
  // Sketch steps explored: the budget that bounds the search. Every budget here counts work,
  // never wall time, so every rank of a sweep (and every run) finds the same lowerings whatever
  // the machine's load; the proofs' budget is ProveOptions' (the solver's).
  std::int64_t max_steps = 150000;
  bool all_depths = false;  // keep searching deeper after the first depth with a lowering
  // Instruction fusion: the sketch reads the op's input tile once. Only the first instruction
  // reads values of that shape; later ones (two operands at most) fix up what it reduced.
  bool single_pass = false;
  // Row prefix: the op's full tiles are read by the last instruction only; the ones before it
  // compute per-partition [P, 1] values from the op's per-row operands (exp(x - m) as
  // activation(exp, x, bias = -m): the negation of m first, then the one pass over the tile).
  bool row_prefix = false;
  verify::ProveOptions prove;
};

// One instruction of a sketch: what the search added, enough to rebuild the program.
struct SketchStep {
  std::string instr;        // ISA instruction name
  std::vector<int> inputs;  // node ids in the sketch before compaction (leaves first)
  int attrs = 0;            // which of the instruction's attribute fillings
};

struct Lowering {
  ir::Kernel program;             // instruction nodes over the op's parameters
  std::vector<SketchStep> steps;  // how the search built it
  std::string text;               // e.g. "nc_matmul(nc_transpose_pe(x), y)"
  int depth = 0;
  verify::Verdict proof;
};

enum class SynthesisStop { Exhausted, CandidateLimit, StepLimit };

struct SynthesisResult {
  std::vector<Lowering> lowerings;  // proved, shallowest first, then by text
  std::vector<std::string> pool;    // the instructions considered
  int candidates = 0;               // complete well-shaped candidates
  int filtered = 0;                 // rejected by the numeric check
  int proved = 0, refuted = 0, unknown = 0;
  double proof_ms = 0;
  std::int64_t steps = 0;  // sketch steps explored
  SynthesisStop stop = SynthesisStop::Exhausted;
};

// `op` is a kernel with one op node over its parameters (a tile-level op: 2-D operands).
// Thread-safe for distinct calls; with a cache, repeated proofs are answered once.
SynthesisResult synthesize(const ir::Kernel& op, const sem::InstrTable& isa,
                           const SynthesisOptions& options = {},
                           verify::VerdictCache* cache = nullptr);

// A result as one line of text, and the result rebuilt from such a line for the same op and
// ISA without searching or proving (the proofs' verdicts and times are carried along): how
// the ranks of a sweep hand each other what they synthesized. A line that does not fit the
// op and ISA is an InternalError.
std::string synthesis_record(const SynthesisResult& r);
SynthesisResult replay_synthesis(const ir::Kernel& op, const sem::InstrTable& isa,
                                 const std::string& record);

// The primitive operations (functions, reductions, arithmetic) an element expression uses:
// what the pool filter compares.
std::vector<std::string> constituents(const sem::TermGraph& body);

}  // namespace ts::lower

// The instruction-choice axis of the candidate space: every compute op of a kernel variant
// lowered to each proved instruction sequence for its tile form. Synthesis is shape-independent,
// so results are kept per tile-op kind and reused across ops, variants and kernels.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tilesweep/lower/synthesize.h"
#include "tilesweep/lower/tile_op.h"

namespace ts::lower {

// Synthesis results by tile-op key. Thread-safe.
class SynthesisCache {
 public:
  const SynthesisResult& get(const TileOp& op, const sem::InstrTable& isa, const SynthesisOptions& options,
                             verify::VerdictCache* verdicts);
  std::size_t size() const;
  std::size_t hits() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, SynthesisResult> results_;
  std::size_t hits_ = 0;
};

struct OpChoices {
  int node = -1;
  std::string label;                  // "matmul@3"
  std::string tile;                   // the tile op, e.g. "matmul(x, y)" over its tile shapes
  const SynthesisResult* synthesis = nullptr;  // null for layout ops and constants
  std::string note;                   // why there is no synthesis
};

// Instruction fusion (Axon §4.5): an element-wise op and the reduction that is its only user,
// lowered together by depth-1 synthesis to one instruction (sum(square(x)) = activation_reduce).
struct PairChoice {
  int producer = -1, consumer = -1;
  std::string label;                  // "square@2+mean@2"
  const SynthesisResult* synthesis = nullptr;  // proved single instructions
};

struct KernelChoices {
  std::vector<OpChoices> ops;         // compute ops in topological order
  std::vector<PairChoice> pairs;      // fusable pairs that have a proved single instruction
  double combinations = 1;            // product of lowering counts over synthesized ops
  int unlowered = 0;                  // compute ops with no proved lowering
};

KernelChoices instruction_choices(const ir::Kernel& k, const sem::InstrTable& isa, SynthesisCache& cache,
                                  const SynthesisOptions& options = {}, verify::VerdictCache* verdicts = nullptr);

}  // namespace ts::lower

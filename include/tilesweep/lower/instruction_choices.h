// The instruction-choice axis of the candidate space: every compute op of a kernel variant
// lowered to each proved instruction sequence for its tile form. Synthesis is shape-independent,
// so results are kept per tile-op kind and reused across ops, variants and kernels.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tilesweep/lower/chunked_scan.h"
#include "tilesweep/lower/layout_swap.h"
#include "tilesweep/lower/online_split.h"
#include "tilesweep/lower/region.h"
#include "tilesweep/lower/split_reduction.h"
#include "tilesweep/lower/synthesize.h"
#include "tilesweep/lower/tile_op.h"

namespace ts::lower {

// Synthesis results by tile-op key (with the ISA's digest and the budgets). Thread-safe.
// text() hands what this cache synthesized to another process; absorb() takes such a text,
// and get() then rebuilds those results (replay_synthesis) instead of searching.
class SynthesisCache {
 public:
  const SynthesisResult& get(const TileOp& op, const sem::InstrTable& isa,
                             const SynthesisOptions& options, verify::VerdictCache* verdicts);
  std::size_t size() const;
  std::size_t hits() const;
  std::size_t searches() const;  // results found by searching, not by the cache or a record

  std::string text() const;          // one line per result searched here: "<key hash> <record>"
  std::string records_text() const;  // the same for every record known: searched or absorbed
  std::size_t records() const;       // records absorbed
  void absorb(const std::string& text);

  // What a result is cached under: equal keys, equal results.
  static std::string key(const TileOp& op, const sem::InstrTable& isa,
                         const SynthesisOptions& options);

 private:
  mutable std::mutex mu_;
  std::map<std::string, SynthesisResult> results_;
  std::map<std::string, std::string> searched_;  // key hash -> record, of results searched here
  std::map<std::string, std::string> records_;   // key hash -> record, absorbed, not yet rebuilt
  std::size_t hits_ = 0;
};

struct OpChoices {
  int node = -1;
  std::string label;  // "matmul@3"
  std::string tile;   // the tile op, e.g. "matmul(x, y)" over its tile shapes
  const SynthesisResult* synthesis = nullptr;  // null for layout ops and constants
  std::string note;                            // why there is no synthesis
  // A matmul whose left operand is a transposed view of a value in HBM (transpose(x) of an
  // input): the lowerings of matmul(transpose(x), y) (nc_matmul(x, y)), for x loaded as the
  // stationary operand as it lies, no transpose (stationary_lhs()).
  const SynthesisResult* stationary = nullptr;
};

// Instruction fusion (Axon §4.5): an element-wise op and the reduction that is its only user,
// lowered together by synthesis to one instruction that reads the tile (sum(square(x)) =
// activation_reduce), alone or followed by one that fixes up the reduced [P, 1] values
// (mean(square(x)) = activation_reduce(x, func='square') / F): SynthesisOptions::single_pass.
//
// An element-wise region (region.h) is one too: `consumer` its root, `absorbed` the ops
// computed inside the root's one instruction, `operands` the (reader, input) pairs its
// lowering's parameters are. A pair leaves both empty (its producer is absorbed, the
// producer's inputs are the operands).
struct PairChoice {
  int producer = -1, consumer = -1;
  std::string label;                           // "square@2+mean@2"
  const SynthesisResult* synthesis = nullptr;  // proved single instructions
  std::vector<int> absorbed;                   // a region's ops besides its root
  std::vector<std::pair<int, int>> operands;   // a region's lowering parameters
};

// A producer of a swap site (layout_swap.h) with the transpose fused into its root instruction:
// per lowering of the producer, the part over x (`pre`, hoisted out of the N loop) and the fused
// root over (a, b) = (pre(x), y); `fused.lowerings` holds the two composed, each proved equal to
// transpose(matmul(x, y)).
struct FusedProducer {
  int node = -1;
  SynthesisResult fused;
  std::vector<ir::Kernel> pre;          // per lowering
  std::vector<const ir::Kernel*> root;  // per lowering, from the instruction fusion's synthesis
};

// The second propagation round where it applies: every chain op proved to commute with
// transpose, the consumer's lowerings with its left operand transposed, the producers fused.
struct SwapChoice {
  SwapSite site;
  std::string label;                      // "matmul@1 reads mul@1 transposed"
  const SynthesisResult* use = nullptr;   // matmul(transpose(x), y)
  std::vector<verify::Verdict> commutes;  // per chain op
  std::vector<std::string> fusions;       // "transpose(nc_matmul(a, b)) = nc_matmul(b, a)"
  std::vector<std::shared_ptr<const FusedProducer>> producers;  // per site producer
};

struct KernelChoices {
  std::vector<OpChoices> ops;     // compute ops in topological order
  std::vector<PairChoice> pairs;  // fusable pairs that have a proved single instruction
  std::vector<SwapChoice> swaps;  // where the transposes of a matmul's operand move up and vanish
  std::vector<SplitReduction> splits;  // free-axis reductions, their splits proved or not
  std::vector<OnlineSplit> online;     // running-statistic corrections, proved or not
  std::vector<ChunkedScan> scans;      // free-axis scans, their chunks proved or not
  double combinations = 1;             // product of lowering counts over synthesized ops
  int unlowered = 0;                   // compute ops with no proved lowering
};

// One synthesis instruction_choices() asks for: a compute op's tile op (producer -1; no `op`
// when it has no tile form, with `why`), a fusable pair's (producer -> node) at depth 1, or a
// swap site consumer's tile op with its left operand transposed (`transposed_use`, depth 1).
// (The instruction fusions of a swap site's producers depend on their lowerings, so they are
// not listed: each process synthesizes those small queries itself.)
// An element-wise region's query (depth 1) names its other ops (`region`) and operands.
struct SynthesisQuery {
  int node = -1, producer = -1;
  bool transposed_use = false;
  std::optional<TileOp> op;
  std::string why;
  SynthesisOptions options;
  std::vector<int> region;
  std::vector<std::pair<int, int>> operands;
};

// True when matmul `node`'s left operand is a transpose of the last two dims of another value:
// that value read as it lies is the matmul's stationary operand.
bool stationary_lhs(const ir::Kernel& k, int node);

// The queries of instruction_choices(k, isa, ..., options), in its order.
std::vector<SynthesisQuery> synthesis_queries(const ir::Kernel& k, const sem::InstrTable& isa,
                                              const SynthesisOptions& options = {});

KernelChoices instruction_choices(const ir::Kernel& k, const sem::InstrTable& isa,
                                  SynthesisCache& cache, const SynthesisOptions& options = {},
                                  verify::VerdictCache* verdicts = nullptr);

}  // namespace ts::lower

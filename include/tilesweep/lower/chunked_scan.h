// Scans tiled along their axis (issue 17 item 3): a scan along the free axis whose row is longer
// than a tile is computed chunk by chunk, the recurrence's state carried from one chunk to the
// next. The op names its chunk op in ops.toml (`chunk`: scan -> scan_from); the chunk op takes
// the scan's operands and, last, the state ([.., 1]) the previous chunk ended in:
//
//   state <- 0;  for each chunk t:  out[:, t] = chunk(a[:, t], b[:, t], state);
//                                   state <- out[:, t][:, last]
//
// The step is sound when, for every A, B and start s,
//
//   chunk(a[M, A + B], b, s) = concat(p, chunk(a[:, A:], b[:, A:], p[:, A - 1 : A]))
//       where p = chunk(a[:, :A], b[:, :A], s)                                  (chunk lemma)
//   op(a, b) = chunk(a, b, 0)                                                   (start lemma)
//
// Z3 proves the start lemma over unbounded rows, and the chunk lemma element by element for
// every chunk length A, B up to kProvedChunk (bounded: the verifier unrolls sums and products
// over numeric ranges; over unbounded ones the products of the two chunks do not meet in its
// normal form, so the lemma at every length is not proved, only at these). A chunked program
// applies the lemma with A = the columns done so far, B = the chunk. A scan whose lemmas are not
// proved is not chunked. No op is named in C++: the pair comes from the op table, the proof from
// the element expressions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/lower/materialize.h"
#include "tilesweep/lower/synthesize.h"
#include "tilesweep/lower/tile_op.h"
#include "tilesweep/verify/cache.h"
#include "tilesweep/verify/prove.h"

namespace ts::lower {

// The largest chunk length A and B of the proved splits (1..kProvedChunk each).
inline constexpr int kProvedChunk = 3;

struct ChunkedScan {
  int node = -1;
  bool proved = false;
  std::vector<verify::Verdict> proofs;  // the start lemma, then per (A, B) and column
  std::string why;                      // when not proved: why not
  // The chunk step's lowerings (chunk_tile_op), filled by instruction_choices; null or empty:
  // the scan is not chunked.
  const SynthesisResult* step = nullptr;

  bool usable() const { return proved && step && !step->lowerings.empty(); }
};

// True for an op along the last axis of its operands whose op names a chunk op.
bool free_axis_scan(const ir::Kernel& k, int node);

// The proof kernels of `op` (a built-in op with a chunk op) over rows of A + B columns split at
// A (A, B >= 1, numbers), one pair per output column c (its value at a numeric index, so that
// the verifier unrolls every sum and product): `whole` = chunk(a, b, s)[:, c], `split` the two
// chunks concatenated, column c. The start lemma's pair: op(a, b) and chunk(a, b, 0) over rows
// of N. A UserError when the ops do not parse.
struct ChunkKernels {
  ir::Kernel whole, split;
};
std::vector<ChunkKernels> chunk_kernels(const std::string& op, const std::string& chunk, int a,
                                        int b);
ChunkKernels start_kernels(const std::string& op, const std::string& chunk);

// One entry per free-axis scan of `k`, in node order. Thread-safe; with a cache, the same op's
// questions are answered once.
std::vector<ChunkedScan> chunked_scans(const ir::Kernel& k,
                                       const verify::ProveOptions& options = {},
                                       verify::VerdictCache* cache = nullptr);

// The tile op of scan `node`'s chunk step: chunk(x [P, F], y [P, F], z [P, 1]).
std::optional<TileOp> chunk_tile_op(const ir::Kernel& k, int node);

// Appends to `tilings` (a group's, the first one whole-row) the chunked ones: the free tile
// (GroupTiling::free) of 512, 1024, .. 4096 columns dividing the group's rows and shorter than
// them (as streamed reductions' free tiles start at 512: each chunk costs a fixed overhead per
// instruction and one more instruction, the state's copy); offered for a chunkable group
// (GroupExtent::chunkable) whose scans are all usable.
void add_chunked_tilings(std::vector<GroupTiling>& tilings, const ir::Kernel& k,
                         const std::vector<int>& group, const GroupExtent& extent,
                         const std::vector<ChunkedScan>& scans);

}  // namespace ts::lower

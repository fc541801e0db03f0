// Scans tiled along their axis (issue 17 item 3): a scan along the free axis whose row is longer
// than a tile is computed chunk by chunk, the recurrence's state carried from one chunk to the
// next. The op names its chunk op in ops.toml (`chunk`: scan -> scan_from); the chunk op takes
// the scan's operands and, last, the state ([.., 1]) the previous chunk ended in:
//
//   state <- 0;  for each chunk t:  out[:, t] = chunk(a[:, t], b[:, t], state);
//                                   state <- out[:, t][:, last]
//
// The step is sound when, for every A, B and start s (columns c of the split form: p's for c < A,
// then the second chunk's),
//
//   chunk(x[:, :A + B], s)[:, c] = split(x, s)[:, c]      where p = chunk(x[:, :A], s),
//   split = concat(p, chunk(x[:, A:], p[:, A - 1 : A]))                         (chunk lemma)
//   op(x) = chunk(x, 0)                                                         (start lemma)
//
// Z3 does not prove the chunk lemma over unbounded A and B directly (the products of the two
// chunks do not meet in the verifier's normal form). It proves, over unbounded dims, the start
// lemma and two lemmas the chunk lemma follows from by induction on A:
//
//   prefix: chunk(x[:, :A], s) = chunk(x, s)[:, :A]                 (rows of A + B columns)
//   peel:   chunk(x, s)[:, N] = chunk(x[:, 1:], chunk(x[:, :1], s))[:, N - 1]   (rows of N + 1)
//
// Induction (C(A): chunk(x, s)[A + k] = chunk(x[A:], chunk(x, s)[A - 1])[k] for every row longer
// than A + k). C(1) is peel at N = 1 + k on the prefix of k + 2 columns, with prefix taking both
// sides' rows back to any length. C(A) -> C(A + 1): chunk(x, s)[A + 1 + k] =
// chunk(x[A:], chunk(x, s)[A - 1])[1 + k] (C(A)) = chunk(x[A + 1:], chunk(x[A:], chunk(x, s)[A -
// 1])[0])[k] (C(1) on x[A:]) = chunk(x[A + 1:], chunk(x, s)[A])[k] (C(A) at k = 0). The split's
// columns c < A are prefix's; its state p[A - 1] is chunk(x, s)[A - 1] by prefix; its columns
// A + k are C(A). The schema is the op's own: any chunk op whose three lemmas Z3 proves chunks
// soundly. A chunked program applies the lemma with A = the columns done so far, B = the chunk.
// A scan whose lemmas are not proved is not chunked. No op is named in C++: the pair comes from
// the op table, the proof from the element expressions.
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

struct ChunkedScan {
  int node = -1;
  bool proved = false;
  std::vector<verify::Verdict> proofs;  // start, prefix, peel (chunk_lemmas' order)
  std::string why;                      // when not proved: why not
  // The chunk step's lowerings (chunk_tile_op), filled by instruction_choices; null or empty:
  // the scan is not chunked.
  const SynthesisResult* step = nullptr;

  bool usable() const { return proved && step && !step->lowerings.empty(); }
};

// True for an op along the last axis of its operands whose op names a chunk op.
bool free_axis_scan(const ir::Kernel& k, int node);

// The lemmas of `op` (a built-in op with a chunk op) over unbounded dims, in the order start,
// prefix, peel (see above): `whole` and `split` kernels Z3 must prove equal. A UserError when the
// ops do not parse.
struct ChunkLemma {
  std::string name;  // "start", "prefix", "peel"
  ir::Kernel whole, split;
};
std::vector<ChunkLemma> chunk_lemmas(const std::string& op, const std::string& chunk);

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

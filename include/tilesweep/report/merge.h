// `tilesweep merge` and `tilesweep diff` over archives.
//
// Merge rules (results/README.md documents them):
//   - every /candidates, /proofs and /progress row is kept, each source's rows contiguous, and
//     /sources records which rows came from which archive (merging a merged archive keeps its
//     sources, not the merged file);
//   - /best keeps one row per (kernel, target, shape, mesh): the lower latency; ties (and rows
//     without a latency) go to the archive given first; /best_origin records its source;
//   - refused (UserError naming both archives): a target name whose description text differs, a
//     kernel file whose source text differs, another schema version (read_archive refuses it).
#pragma once

#include <string>
#include <vector>

#include "tilesweep/report/select.h"

namespace ts::report {

struct Merged {
  store::Archive archive;
  store::Provenance provenance;
};

Merged merge_archives(const std::vector<LoadedArchive>& inputs, const std::string& tool_version);

// One per-shape change between two archives' /best tables.
struct BestChange {
  enum class Kind { Regression, Removed, Improvement, Changed, Added };
  Kind kind = Kind::Changed;
  std::string kernel, target, shape, mesh;
  double before_ns = 0, after_ns = 0;  // NaN when absent
  std::int64_t before_index = -1, after_index = -1;
  std::string before_config, after_config;
};

// The changes from `a` to `b`: regressions first (largest slowdown first), then keys only in
// `a`, improvements (largest speedup first), candidate changes at the same latency, keys only
// in `b`; within a kind by key. Empty when the /best tables agree. A latency change of at most
// `threshold_pct` percent is no regression or improvement: it is listed as a candidate change
// when the candidate differs, and not at all when only the latency moved.
std::vector<BestChange> diff_best(const store::Archive& a, const store::Archive& b,
                                  double threshold_pct = 0);

// One line, with only the knobs that changed: "regression   softmax trn1 M=256,N=256 mesh 1:
// 1200.0 ns -> 1300.0 ns (+8.3%); candidate 3 -> 7: g0.pt: 128 -> 64".
std::string describe(const BestChange& c);

}  // namespace ts::report

// The statistics tables of a report (internal to ts_report).
#pragma once

#include "tilesweep/report/report.h"

namespace ts::report::detail {

// The `bound` column: why.h's bound_phrase ("dma 92% busy; 8 of 128 partitions; spills 1.0 MiB",
// "no program", "no feasible candidate").
Table latency_table(const store::Archive& a);
Table latency_total_table(const std::vector<store::BestRecord>& best);
Table stage_table(const store::Archive& a);
Table phase_table(const store::Meta& m);
Table proof_table(const std::vector<store::ProofRecord>& proofs);
Table search_table(const LoadedArchive& l);

}  // namespace ts::report::detail

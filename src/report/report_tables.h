// The statistics tables of a report (internal to ts_report).
#pragma once

#include "tilesweep/report/report.h"

namespace ts::report::detail {

// "dma 92% busy": the engine busiest over the best candidate's latency; "no program" without one.
std::string bound_of(const store::BestRecord& b);
Table latency_table(const std::vector<store::BestRecord>& best);
Table latency_total_table(const std::vector<store::BestRecord>& best);
Table stage_table(const store::Archive& a);
Table phase_table(const store::Meta& m);
Table proof_table(const std::vector<store::ProofRecord>& proofs);
Table search_table(const LoadedArchive& l);

}  // namespace ts::report::detail

// The statistics tables of a report (internal to ts_report).
#pragma once

#include "tilesweep/report/report.h"

namespace ts::report::detail {

Table stage_table(const store::Archive& a);
Table phase_table(const store::Meta& m);
Table proof_table(const std::vector<store::ProofRecord>& proofs);
Table search_table(const LoadedArchive& l);

}  // namespace ts::report::detail

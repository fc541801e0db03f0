// What a run's journal is numbered against. Unit ids are positions in the plan: the same id
// means the same candidates only when the same prepare built the same plan (the same variants,
// the same synthesized lowerings, the same spaces and samples, the same units). The job hash
// covers the job and kernel texts; the plan digest covers what the prepare derived from them,
// so a resume whose prepare came out differently (another tilesweep version, a budget that ran
// out differently) is refused instead of filing rows under the wrong keys.
//
// The journal's header records "<job hash>.<plan digest>".
#pragma once

#include <string>

#include "tilesweep/sweep/plan.h"

namespace ts::sweep {

// 16 hex digits over every prepared kernel's variants and instruction choices, every space's
// key, names, size and sample size, and every unit. Equal on every rank that built the same plan.
std::string plan_digest(const Plan& plan);

// The journal header's text for a job hash and a plan digest.
std::string run_identity(const std::string& job_hash, const std::string& plan_digest);

// Before the plan: throws UserError when the journal at `path` (if it has a header) belongs to
// another job, or was written before journals recorded their plan.
void check_journal_job(const std::string& path, const std::string& job_hash);

// After the plan: throws UserError when the journal at `path` (if it has a header) was recorded
// against another plan of the same job.
void check_journal_plan(const std::string& path, const std::string& job_hash,
                        const std::string& plan_digest);

}  // namespace ts::sweep

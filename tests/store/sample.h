// Sample records for the store tests and the sample writer, and field-by-field dumps that
// compare records (NaN equals NaN) with readable diffs. The dumps list every field by hand, so
// a field the store forgets to write shows up as a difference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tilesweep/store/archive.h"
#include "tilesweep/store/journal.h"

namespace ts::store::test {

// Deterministic records varied by `i`: some infeasible with NaN latencies, empty and
// non-ASCII strings.
CandidateRecord sample_candidate(std::int64_t i);
BestRecord sample_best(std::int64_t i);
ProofRecord sample_proof(std::int64_t i);
ProgressRecord sample_progress(std::int64_t i);
Meta sample_meta();

// An archive with `candidates` candidate rows and a few of every other table.
Archive sample_archive(std::int64_t candidates);

// A unit whose id is `unit` with `candidates` candidates.
UnitResult sample_unit(std::int64_t unit, std::int64_t candidates);

std::string dump(const CandidateRecord& r);
std::string dump(const BestRecord& r);
std::string dump(const ProofRecord& r);
std::string dump(const ProgressRecord& r);
std::string dump(const Meta& m);
std::string dump(const UnitResult& u);

template <class Rec>
std::vector<std::string> dump_all(const std::vector<Rec>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(dump(r));
  return out;
}

}  // namespace ts::store::test

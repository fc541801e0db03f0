// Materializes the candidates of one space one after another, building a program only when its
// structure changes. Candidates that differ only in engines, multi-buffering depth and cores are
// one program with those rebound (lower::rebind; Program::cores, refused as materialize refuses
// it: core_split.h, or rebuilt with a cross-core reduction: core_reduction.h), and they are
// neighbours in the index (the innermost digits), so a walk over a range of indices builds one
// program in every engine-policies x depths x core counts (6 by default) and rebinds the rest.
//
// Not thread-safe: one cursor per thread; the space is shared.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tilesweep/lower/candidate_space.h"

namespace ts::lower {

class CandidateCursor {
 public:
  explicit CandidateCursor(const CandidateSpace& space) : space_(space) {}

  // The program of candidate `index`, as CandidateSpace::materialize(index) builds it but
  // without the instructions' notes (Inst::note: for people, not for scoring); valid until the
  // next call; or NoProgram, like materialize.
  const Lowered<Program>& at(std::int64_t index);

  std::int64_t built() const { return built_; }  // programs built so far (the rest were rebound)

 private:
  const CandidateSpace& space_;
  Candidate last_, next_;  // the program's candidate; the one being decoded (storage reused)
  ProgramPlan plan_;
  bool valid_ = false;  // program_ holds last_'s program
  Lowered<Program> program_ = Program{};
  // Whether program_'s structure splits over cores: unknown until a rebind to cores > 1 asks.
  std::optional<std::optional<std::string>> conflict_;
  bool reduces_ = false;  // the conflict is a reduction the cores combine (core_reduction.h)
  // What at() returns for a split it refuses, or the program with its cross-core reduction.
  Lowered<Program> refused_ = NoProgram{};
  std::int64_t built_ = 0;
};

}  // namespace ts::lower

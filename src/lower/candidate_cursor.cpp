#include "tilesweep/lower/candidate_cursor.h"

#include "tilesweep/lower/core_reduction.h"
#include "tilesweep/lower/core_split.h"

namespace ts::lower {

namespace {

// Same program structure: everything but the engines and the buffering depths.
bool same_structure(const Candidate& a, const Candidate& b) {
  if (a.section != b.section || a.lowering != b.lowering ||
      a.instruction_fusion != b.instruction_fusion || a.tiling.size() != b.tiling.size())
    return false;
  for (std::size_t g = 0; g < a.tiling.size(); ++g)
    if (a.tiling[g].pt != b.tiling[g].pt || a.tiling[g].block != b.tiling[g].block ||
        a.tiling[g].free != b.tiling[g].free || a.tiling[g].spill != b.tiling[g].spill ||
        a.tiling[g].hoist != b.tiling[g].hoist || a.tiling[g].resident != b.tiling[g].resident ||
        a.tiling[g].store != b.tiling[g].store || a.tiling[g].panel != b.tiling[g].panel ||
        a.tiling[g].in_place != b.tiling[g].in_place ||
        a.tiling[g].pipeline != b.tiling[g].pipeline ||
        a.tiling[g].onchip_steps != b.tiling[g].onchip_steps ||
        a.tiling[g].pe_broadcast != b.tiling[g].pe_broadcast ||
        a.tiling[g].psum_partials != b.tiling[g].psum_partials ||
        a.tiling[g].psum_values != b.tiling[g].psum_values ||
        a.tiling[g].psum_loads != b.tiling[g].psum_loads)
      return false;
  return true;
}

}  // namespace

const Lowered<Program>& CandidateCursor::at(std::int64_t index) {
  space_.decode(index, next_);
  space_.plan(next_, plan_);
  plan_.notes = false;
  if (valid_ && same_structure(next_, last_)) {
    rebind(*program_, plan_);
    program_->cores = plan_.cores;
    if (plan_.cores > 1) {
      if (!conflict_) {
        conflict_ = core_split_conflict(*program_);
        reduces_ = *conflict_ && !core_reduced(*program_).empty();
      }
      if (*conflict_) {  // last_ keeps naming the program built
        if (reduces_) {  // a cross-core reduction: the program rebuilt around its core loop
          refused_ = with_core_reduction(*program_, plan_.cores, space_.target());
          return refused_;
        }
        refused_ = NoProgram{"not split over cores: " + **conflict_};
        return refused_;
      }
    }
  } else {
    program_ = space_.materialize(next_, plan_);
    valid_ = static_cast<bool>(program_);  // no program: the next candidate builds again
    conflict_.reset();
    if (valid_) ++built_;
  }
  std::swap(last_, next_);
  return program_;
}

}  // namespace ts::lower

// Whether a program's top-level loops may be split over several NeuronCores (Program::cores):
// each core runs a contiguous share of every top-level loop's iterations with its own SBUF and
// PSUM, the HBM shared, and the cores meet at a barrier after each top-level loop. That is the
// same computation only when no on-chip value flows between iterations of a top-level loop (a
// reduction carried across them, PSUM accumulating over them), between top-level loops (one
// nest's tile read by the next), or from a loop to the top-level instructions after it; and when
// no top-level loop reads back HBM scratch it writes (a spill another core's share may write).
#pragma once

#include <optional>
#include <set>
#include <string>

#include "tilesweep/lower/program.h"

namespace ts::lower {

// nullopt when `p` may run on several cores; otherwise why not, in words.
std::optional<std::string> core_split_conflict(const Program& p);
// The same, but the on-chip buffers in `reduced` are combined over the cores after the loop (a
// cross-core reduction, core_reduction.h): carried across the loop's iterations, accumulated
// over them, and read by the top-level instructions after it.
std::optional<std::string> core_split_conflict(const Program& p, const std::set<int>& reduced);

// The core counts a search tries when up to `max_cores` may be used: 1, 2, 4, ... below it and
// max_cores itself; choice d of core_choice_count(max_cores).
int core_choice_count(int max_cores);
int core_choice(int max_cores, int d);

}  // namespace ts::lower

// Candidate programs as text: the buffers with their memories and multi-buffering, then the
// loop nest with one line per instruction (engine, operands, attributes, what it computes).
#pragma once

#include <string>

#include "tilesweep/lower/program.h"

namespace ts::lower {

std::string print_program(const Program& p);

}  // namespace ts::lower

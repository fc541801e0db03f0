// Several NeuronCores of one chip running one program (lower::Program::cores): what they share
// and what keeping them in step costs, from the target description. Cores are used in order, so
// the cores attached to one HBM stack fill it before the next stack is used (trn2's LNC=2 pair
// is cores 0 and 1, sharing stack 0); the cores on one stack share its bandwidth (chip HBM /
// stacks), and a program's HBM bandwidth is that of the stacks its cores touch.
#pragma once

#include <string>

#include "tilesweep/target/target.h"

namespace ts::sim {

// HBM bandwidth (B/s) one of `cores` cores may use: the stacks they touch, shared evenly.
double hbm_bytes_per_s_per_core(const target::Target& t, int cores);

// The time (ns) of one barrier between `cores` cores: ceil(log2 cores) rounds of
// overheads.core_barrier_ns (a dissemination barrier); 0 for one core.
double core_barrier_ns(const target::Target& t, int cores);

// UserError unless 1 <= cores <= the target's NeuronCores per chip; `what` names the setting
// in the message ("--cores", "[search] cores").
void check_cores(const target::Target& t, int cores, const std::string& what);

}  // namespace ts::sim

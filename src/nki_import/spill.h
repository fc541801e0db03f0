// Spilling of on-chip arrays over SBUF's capacity (spill.cpp). Private to the library.
#pragma once

#include "tilesweep/lower/program.h"
#include "tilesweep/target/target.h"

namespace ts::nki {

// Buffers of a spilled array's staging tiles: the space the array freed lets the allocator rotate
// more of them. FITTED on the NKIBench matmul baseline (bench/calibration): with 2 its reloads
// chain on the DMA start latency (60.1 ms simulated), with 4 they stream (40.1 ms; 35.3 measured).
constexpr int kStagingBuffers = 4;

// On-chip arrays over SBUF's capacity moved out, largest first, as the compiler does
// (rematerialized from their input or spilled to an HBM scratch tensor).
void spill_over_capacity(lower::Program& p, const target::Target& t);

}  // namespace ts::nki

// On-chip capacity of a candidate program: every SBUF and PSUM buffer is allocated for the
// whole kernel (bufs copies each), as the Neuron compiler allocates NKI tiles. A program whose
// buffers do not fit is infeasible, as the compiler would reject it.
#pragma once

#include <cstdint>
#include <string>

#include "tilesweep/lower/program.h"
#include "tilesweep/target/target.h"

namespace ts::sim {

struct Capacity {
  std::int64_t sbuf_bytes =
      0;  // per partition: sum over SBUF buffers of bytes_per_partition x bufs
  std::int64_t psum_bytes = 0;  // per partition, likewise for PSUM
  int psum_banks = 0;           // banks: each PSUM tile takes whole banks, x bufs
  std::string reason;           // empty when it fits, else e.g.
                                // "SBUF needs 260 KiB per partition, 208 KiB usable"
  bool feasible() const { return reason.empty(); }
};

// Checks partitions (<= the memory's partitions), SBUF bytes (<= usable_bytes_per_partition),
// PSUM tiles (each <= bank_bytes per partition) and PSUM banks (<= banks).
Capacity check_capacity(const lower::Program& p, const target::Target& t);

}  // namespace ts::sim

// PSUM depth (contract in emission.h): a matmul's accumulator rotates over at most two copies
// (its Depth cap), so the PE runs at most two tiles ahead of the engine evacuating them. Where
// that engine has other work between evacuations (bmm_softmax on trn2: the Scalar engine copies a
// score row's 8 banks out, then runs the row's exp for about as long as the PE takes for the next
// row), the PE stalls on the third bank. PSUM holds little else in most nests, so at the deepest
// multi-buffering a candidate picks (bufs >= 3) the PE's tiles — accumulators and transposes —
// take the banks their nest leaves free, after every other PSUM buffer is placed (pe-broadcast
// rows, partials, values in PSUM): the program still fits. Not at bufs = 2: running further
// ahead also reorders the DMA queues, and a DMA-bound nest (bmm on trn1) can lose by it
// (4,455.43 -> 4,535.05 us), so both stay candidates.
#include <vector>

#include "emission.h"

namespace ts::lower {

void fill_psum_banks(Program& p, const target::Target& t, const ProgramPlan& plan) {
  const std::int64_t bank = t.psum.bank_bytes;
  const int groups = static_cast<int>(plan.groups.size());
  for (int g = 0; g < groups && static_cast<std::size_t>(g) < plan.tiling.size(); ++g) {
    if (plan.tiling[static_cast<std::size_t>(g)].bufs < 3) continue;
    std::vector<Buffer*> fill;
    for (Buffer& b : p.buffers)
      if (b.fills_psum && b.nest == g && b.memory == sem::Memory::Psum && b.bufs >= 2)
        fill.push_back(&b);
    if (fill.empty()) continue;
    int free = t.psum.banks - nest_use(p, bank, g, groups).psum_banks;
    for (bool grew = true; grew && free > 0;) {  // one copy each in turn
      grew = false;
      for (Buffer* b : fill) {
        int banks = static_cast<int>((b->bytes_per_partition() + bank - 1) / bank);
        if (banks > free || b->bufs >= t.psum.banks) continue;
        ++b->bufs;
        free -= banks;
        grew = true;
      }
    }
  }
}

}  // namespace ts::lower

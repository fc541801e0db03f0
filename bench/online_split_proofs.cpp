// Proof time of the online splits (online_split.h) of the attention-shaped suite kernels: each
// kernel's algebraic variants (operator propagation), each (statistic, consumer) step proved
// `runs` times (fresh Z3 context, no cache), one query per step; the median ms and the largest
// Z3 resource count (rlimit units). Usage: bench_online_split_proofs [runs]
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/online_split.h"
#include "tilesweep/mutate/propagate.h"

int main(int argc, char** argv) {
  using namespace ts;
  int runs = argc > 1 ? std::atoi(argv[1]) : 5;
  fmt::print("kernel\tvariant\tconsumer\tchain\tverdict\tqueries\tmedian_ms\tmax_rlimit\n");
  for (const char* file : {"axon/softmax.py", "axon/softmax_matmul.py", "axon/gqa.py",
                           "nkibench/bmm_softmax.py", "nkibench/gqa.py"}) {
    ir::Module m = ir::load_module(std::string(TS_SOURCE_DIR) + "/jobs/kernels/" + file,
                                   sem::OpTable::builtin());
    const ir::Kernel& k = m.kernels.back();
    mutate::VariantSet vs = mutate::propagate(k, {});
    std::set<std::string> seen;  // the same step in several variants: timed once
    for (std::size_t v = 0; v < vs.variants.size(); ++v) {
      const ir::Kernel& kv = vs.variants[v].kernel;
      for (const auto& s : lower::online_splits(kv)) {
        std::string chain;
        for (int n : s.chain) chain += (chain.empty() ? "" : ",") + kv.nodes[n].op;
        std::string consumer = kv.nodes[s.consumer].op;
        if (!seen.insert(consumer + "|" + chain).second) continue;
        std::vector<double> ms;
        std::uint64_t rlimit = 0;
        verify::Verdict last;
        lower::OnlineSplitKernels pk = lower::online_split_kernels(kv, s);
        for (int r = 0; r < runs; ++r) {
          last = verify::prove_equivalent(pk.whole, pk.split);
          ms.push_back(last.ms);
          rlimit = std::max(rlimit, last.rlimit_used);
        }
        std::sort(ms.begin(), ms.end());
        fmt::print("{}\t{}\t{}\t{}\t{}\t1\t{:.1f}\t{}\n", k.name, v, consumer, chain,
                   verify::verdict_name(last.kind), ms[ms.size() / 2], rlimit);
      }
    }
  }
  return 0;
}

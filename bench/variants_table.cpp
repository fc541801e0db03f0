// End-to-end driver: operator propagation on every suite kernel. Prints a Markdown table of
// variants found, equivalence queries issued and proved, and the median / p95 time of a query
// (each query runs in a fresh Z3 context, with no verdict cache, so the times are solver times).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/mutate/propagate.h"

namespace fs = std::filesystem;

namespace {
double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}
}  // namespace

int main() {
  std::vector<double> all;
  std::cout << "| suite | kernel | variants | queries | proved | unknown | median ms | p95 ms | "
               "wall ms |\n";
  std::cout << "|---|---|---|---|---|---|---|---|---|\n";
  for (const char* suite : {"axon", "nkibench"}) {
    std::vector<fs::path> files;
    for (const auto& f :
         fs::directory_iterator(fs::path(TS_SOURCE_DIR) / "jobs" / "kernels" / suite))
      if (f.path().extension() == ".py") files.push_back(f.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      ts::ir::Module m = ts::ir::load_module(f.string(), ts::sem::OpTable::builtin());
      const auto& k = m.kernel(f.stem().string());
      auto start = std::chrono::steady_clock::now();
      ts::mutate::VariantSet s = ts::mutate::propagate(k);
      double wall =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      std::vector<double> ms;
      int proved = 0, unknown = 0;
      for (const auto& p : s.proofs) {
        ms.push_back(p.verdict.ms);
        proved += p.verdict.proved();
        unknown += p.verdict.kind == ts::verify::VerdictKind::Unknown;
      }
      all.insert(all.end(), ms.begin(), ms.end());
      std::cout << fmt::format("| {} | {} | {} | {} | {} | {} | {:.1f} | {:.1f} | {:.0f} |\n",
                               suite, k.name, s.variants.size(), s.proofs.size(), proved, unknown,
                               percentile(ms, 0.5), percentile(ms, 0.95), wall);
    }
  }
  std::cout << fmt::format("\nall queries: {}, median {:.1f} ms, p95 {:.1f} ms, max {:.1f} ms\n",
                           all.size(), percentile(all, 0.5), percentile(all, 0.95),
                           percentile(all, 1.0));
  return 0;
}

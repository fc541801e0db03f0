// Proof time of the rule files (tests/verify/{true,false,unknown}_identities.py): every pair
// proved `runs` times (fresh Z3 context, no cache); per file the verdict counts, the median and
// p95 over rules of each rule's median time, and the largest Z3 resource count (rlimit units) of
// any solver check, which the default budget must clear. Rules named on the command line are
// also listed one by one. Usage: bench_rules [runs] [rule...]
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/verify/prove.h"

namespace {

namespace fs = std::filesystem;
using namespace ts;

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5)];
}

struct RuleTiming {
  std::string name;
  verify::VerdictKind kind = verify::VerdictKind::Unknown;
  double median_ms = 0;
  std::uint64_t rlimit = 0;
};

std::vector<RuleTiming> time_file(const std::string& file, int runs) {
  ir::Module m = ir::load_module((fs::path(TS_SOURCE_DIR) / "tests" / "verify" / file).string(),
                                 sem::OpTable::builtin());
  std::map<std::string, std::pair<const ir::Kernel*, const ir::Kernel*>> pairs;
  for (const auto& k : m.kernels) {
    auto cut = k.name.rfind('_');
    auto& p = pairs[k.name.substr(0, cut)];
    (k.name.substr(cut + 1) == "lhs" ? p.first : p.second) = &k;
  }
  verify::ProveOptions options;
  options.match_by_name = true;
  std::vector<RuleTiming> out;
  for (const auto& [name, p] : pairs) {
    RuleTiming t{name};
    std::vector<double> ms;
    for (int r = 0; r < runs; ++r) {
      verify::Verdict v = verify::prove_equivalent(*p.first, *p.second, options);
      ms.push_back(v.ms);
      t.kind = v.kind;
      t.rlimit = std::max(t.rlimit, v.rlimit_used);
    }
    t.median_ms = percentile(ms, 0.5);
    out.push_back(t);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  std::set<std::string> shown;
  for (int i = 2; i < argc; ++i) shown.insert(argv[i]);
  fmt::print(
      "| file | rules | equivalent | not equivalent | unknown | median ms | p95 ms | max rlimit "
      "|\n|---|---|---|---|---|---|---|---|\n");
  std::vector<RuleTiming> listed, all;
  for (const char* file : {"true_identities.py", "false_identities.py", "unknown_identities.py"}) {
    auto timings = time_file(file, runs);
    int count[3] = {0, 0, 0};
    std::vector<double> ms;
    std::uint64_t rlimit = 0;
    for (const auto& t : timings) {
      ++count[static_cast<int>(t.kind)];
      ms.push_back(t.median_ms);
      rlimit = std::max(rlimit, t.rlimit);
      if (shown.count(t.name)) listed.push_back(t);
      all.push_back(t);
    }
    fmt::print("| {} | {} | {} | {} | {} | {:.1f} | {:.1f} | {} |\n", file, timings.size(),
               count[0], count[1], count[2], percentile(ms, 0.5), percentile(ms, 0.95), rlimit);
  }
  std::sort(all.begin(), all.end(),
            [](const auto& x, const auto& y) { return x.rlimit > y.rlimit; });
  fmt::print("most expensive checks:");
  for (std::size_t i = 0; i < all.size() && i < 3; ++i)
    fmt::print(" {} ({} units, {:.1f} ms)", all[i].name, all[i].rlimit, all[i].median_ms);
  fmt::print("\n");
  for (const auto& t : listed)
    fmt::print("{}: {} in {:.1f} ms (median of {}), {} rlimit units\n", t.name,
               verify::verdict_name(t.kind), t.median_ms, runs, t.rlimit);
  return 0;
}

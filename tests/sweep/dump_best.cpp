// Test helper: prints an archive's /best rows, one per line, in a fixed format that depends only
// on the results (never on ranks, threads or timing), and checks the invariants every sweep
// archive must meet. Exit 0 when they hold, 1 (with the reason on stderr) when not, 2 when the
// archive cannot be read.
//
// Usage: dump_best ARCHIVE.h5
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <set>
#include <tuple>

#include "tilesweep/base/error.h"
#include "tilesweep/store/archive.h"

namespace {

int check(const ts::store::Archive& a) {
  int bad = 0;
  auto fail = [&](const std::string& what) {
    std::cerr << "invariant: " << what << "\n";
    bad = 1;
  };
  for (const auto& b : a.best) {
    std::string key = fmt::format("{}/{}/{}/{}", b.kernel, b.target, b.shape, b.mesh);
    if (std::isnan(b.latency_ns)) fail(key + ": no feasible candidate");
    // The attainable bound (the target's own peaks) holds for every candidate; AccelOpt's roofline
    // constants may be above or below what the simulator reaches. Archives before schema 3 lack it.
    if (!std::isnan(b.latency_ns) && !std::isnan(b.attainable_ns) &&
        b.latency_ns < b.attainable_ns * (1 - 1e-9))
      fail(key + ": best beats the attainable bound");
    if (!std::isnan(b.attainable_ns) && !(b.attainable_ns > 0)) fail(key + ": no attainable bound");
    if (!std::isnan(b.latency_ns) &&
        std::abs(b.latency_ns - (b.compute_ns + b.collective_ns)) > 1e-9 * b.latency_ns)
      fail(key + ": latency is not compute + collectives");
    if ((b.mesh == "1") != b.sharding.empty())
      fail(key + ": a sharding on one device, or none on a mesh");
    if (!std::isnan(b.heuristic_ns) && b.latency_ns > b.heuristic_ns * (1 + 1e-12))
      fail(key + ": best worse than heuristic");
    if (!std::isnan(b.no_algebra_ns) && b.latency_ns > b.no_algebra_ns)
      fail(key + ": best worse than no-algebra");
    if (!std::isnan(b.no_fusion_ns) && b.latency_ns > b.no_fusion_ns)
      fail(key + ": best worse than no-fusion");
  }
  std::set<
      std::tuple<std::string, std::string, std::string, std::string, std::string, std::int64_t>>
      seen;
  for (const auto& c : a.candidates)
    if (!seen.insert({c.kernel, c.target, c.shape, c.mesh, c.sharding, c.index}).second)
      fail(fmt::format("duplicate /candidates row {}/{}/{}/{}/{} index {}", c.kernel, c.target,
                       c.shape, c.mesh, c.sharding, c.index));
  std::set<std::int64_t> units;
  for (const auto& p : a.progress)
    if (!units.insert(p.unit).second) fail(fmt::format("duplicate /progress unit {}", p.unit));
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: dump_best ARCHIVE.h5\n";
    return 2;
  }
  try {
    ts::store::Archive a = ts::store::read_archive(argv[1]);
    std::cout << "status " << a.meta.status << "\n";
    for (const auto& b : a.best)
      std::cout << fmt::format(
          "{} {} {} {} idx={} shard={} var={} choice={} lat={:.6f} comp={:.6f} coll={:.6f} "
          "roof={:.6f} heur={:.6f} noalg={:.6f} nofus={:.6f} cand={} infeas={} cfg={}\n",
          b.kernel, b.target, b.shape, b.mesh, b.index, b.sharding.empty() ? "-" : b.sharding,
          b.variant, b.choice, b.latency_ns, b.compute_ns, b.collective_ns, b.roofline_ns,
          b.heuristic_ns, b.no_algebra_ns, b.no_fusion_ns, b.candidates, b.infeasible, b.config);
    std::cout << fmt::format("candidates {} progress {}\n", a.candidates.size(), a.progress.size());
    return check(a);
  } catch (const ts::UserError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}

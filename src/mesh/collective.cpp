#include "tilesweep/mesh/collective.h"

#include <algorithm>
#include <bit>

namespace ts::mesh {

const char* collective_name(Collective c) {
  switch (c) {
    case Collective::AllGather:
      return "all-gather";
    case Collective::ReduceScatter:
      return "reduce-scatter";
    case Collective::AllReduce:
      return "all-reduce";
    case Collective::AllToAll:
      return "all-to-all";
  }
  return "?";
}

double bus_factor(Collective c, int r) {
  TS_CHECK(r >= 1, "a group of {} devices", r);
  double f = static_cast<double>(r - 1) / r;
  return c == Collective::AllReduce ? 2 * f : f;
}

namespace {

constexpr int kFullCheck = 256;  // larger groups: O(r^2) steps look at the base member only

// Accumulates steps of one algorithm.
struct Run {
  const Topology& t;
  double ns = 0;
  int steps = 0;
  LinkClass link = LinkClass::IntraChip;

  void note(LinkClass c) {
    if (static_cast<int>(c) > static_cast<int>(link)) link = c;
  }
  double transfer_ns(const Path& p, double bytes, int lanes) {
    note(p.link);
    int n = p.link == LinkClass::NeuronLink ? lanes : 1;
    return p.latency_ns + bytes / (p.bytes_per_s * n) * 1e9;
  }
  // One step: member i sends `bytes` to member partner(i), all at once.
  template <typename Partner>
  void exchange(const std::vector<int>& m, Partner partner, double bytes, int lanes,
                bool all = true) {
    double worst = 0;
    std::size_t n = all || m.size() <= kFullCheck ? m.size() : 1;
    for (std::size_t i = 0; i < n; ++i)
      worst = std::max(worst, transfer_ns(t.path(m[i], m[partner(i)]), bytes, lanes));
    ns += worst;
    ++steps;
  }
  // One step: every member sends `chunk` bytes to every other member; the classes' links work
  // in parallel, NeuronLink traffic counted once per hop.
  void direct(const std::vector<int>& m, double chunk, int lanes) {
    double worst = 0;
    std::size_t n = m.size() <= kFullCheck ? m.size() : 1;
    for (std::size_t i = 0; i < n; ++i) {
      double latency = 0, link_bytes = 0, efa = 0, chip = 0;
      for (std::size_t j = 0; j < m.size(); ++j) {
        if (i == j) continue;
        Path p = t.path(m[i], m[j]);
        note(p.link);
        latency = std::max(latency, p.latency_ns);
        if (p.link == LinkClass::NeuronLink) link_bytes += chunk * p.hops;
        if (p.link == LinkClass::Efa) efa += chunk;
        if (p.link == LinkClass::IntraChip) chip += chunk;
      }
      double bw = std::max({link_bytes / (t.link_bytes_per_s * lanes), efa / t.efa_bytes_per_s,
                            chip / t.chip_bytes_per_s});
      worst = std::max(worst, latency + bw * 1e9);
    }
    ns += worst;
    ++steps;
  }
  CollectiveCost result(std::string name) const { return {ns, std::move(name), 0, steps, link}; }
};

int log2_exact(int r) {
  return std::has_single_bit(static_cast<unsigned>(r)) ? std::countr_zero(static_cast<unsigned>(r))
                                                       : -1;
}

CollectiveCost ring(Collective c, double bytes, const Group& g, const Topology& t) {
  std::vector<int> order = t.ring_order(g);
  int r = g.size();
  Run run{t};
  run.exchange(
      order, [r](std::size_t i) { return (i + 1) % r; }, bytes / r, t.lanes(g));
  int steps = c == Collective::AllReduce ? 2 * (r - 1) : r - 1;
  run.ns *= steps;
  run.steps = steps;
  return run.result("ring");
}

// Recursive doubling / halving: pairs i and i ^ 2^k exchange; all-gather grows the data from
// the nearest partner out, reduce-scatter halves it from the farthest in.
void doubling(Run& run, Collective c, double bytes, const std::vector<int>& m, int levels) {
  int r = static_cast<int>(m.size());
  for (int k = 0; k < levels; ++k) {
    int bit = c == Collective::ReduceScatter ? levels - 1 - k : k;
    double b = c == Collective::AllGather       ? bytes / r * (1 << k)
               : c == Collective::ReduceScatter ? bytes / (2 << k)
                                                : bytes;
    run.exchange(
        m, [bit](std::size_t i) { return i ^ (std::size_t{1} << bit); }, b, run.t.pair_lanes());
  }
}

void dimension_wise(Run& run, Collective c, double bytes, const Group& g, const Topology& t) {
  std::vector<int> axes;  // group axes with extent > 1, slowest first
  for (int a = 0; a < static_cast<int>(g.extents.size()); ++a)
    if (g.extents[a] > 1) axes.push_back(a);
  auto phase = [&](Collective pc, double b, int a) {
    CollectiveCost p = collective_cost(pc, b, g.along(a), t);
    run.ns += p.ns;
    run.steps += p.steps;
    run.note(p.link);
  };
  double cur = bytes;
  switch (c) {
    case Collective::AllToAll:
      for (int a : axes) phase(c, bytes, a);
      return;
    case Collective::ReduceScatter:
      for (auto a = axes.rbegin(); a != axes.rend(); ++a) phase(c, cur, *a), cur /= g.extents[*a];
      return;
    case Collective::AllGather:
      cur = bytes / g.size();
      for (int a : axes) cur *= g.extents[a], phase(c, cur, a);
      return;
    case Collective::AllReduce:
      for (auto a = axes.rbegin(); a + 1 != axes.rend(); ++a)
        phase(Collective::ReduceScatter, cur, *a), cur /= g.extents[*a];
      phase(Collective::AllReduce, cur, axes.front());
      for (auto a = axes.begin() + 1; a != axes.end(); ++a)
        cur *= g.extents[*a], phase(Collective::AllGather, cur, *a);
      return;
  }
}

}  // namespace

std::vector<CollectiveCost> collective_costs(Collective c, double bytes, const Group& g,
                                             const Topology& t) {
  int r = g.size();
  if (r <= 1) return {CollectiveCost{0, "none", 0, 0, LinkClass::IntraChip}};
  std::vector<CollectiveCost> out;
  std::vector<int> m = g.members();
  int levels = log2_exact(r);
  if (c != Collective::AllToAll) out.push_back(ring(c, bytes, g, t));
  if (levels > 0 && c != Collective::AllToAll) {
    Run run{t};
    doubling(run, c, bytes, m, levels);
    out.push_back(
        run.result(c == Collective::ReduceScatter ? "recursive-halving" : "recursive-doubling"));
  }
  if (levels > 0 && c == Collective::AllReduce) {
    Run run{t};
    doubling(run, Collective::ReduceScatter, bytes, m, levels);
    doubling(run, Collective::AllGather, bytes, m, levels);
    out.push_back(run.result("halving-doubling"));
  }
  {
    Run run{t};
    run.direct(m, bytes / r, t.lanes(g));
    if (c == Collective::AllReduce) run.direct(m, bytes / r, t.lanes(g));
    out.push_back(run.result("mesh"));
  }
  if (c == Collective::AllToAll) {
    Run run{t};
    for (int k = 1; k < r; ++k)
      run.exchange(
          m, [k, r](std::size_t i) { return (i + k) % r; }, bytes / r, t.pair_lanes(), false);
    out.push_back(run.result("pairwise"));
  }
  if (g.spanned_axes() >= 2) {
    Run run{t};
    dimension_wise(run, c, bytes, g, t);
    out.push_back(run.result("dimension-wise"));
  }
  for (CollectiveCost& k : out) k.bus_bytes = bus_factor(c, r) * bytes;
  return out;
}

CollectiveCost collective_cost(Collective c, double bytes, const Group& g, const Topology& t) {
  std::vector<CollectiveCost> all = collective_costs(c, bytes, g, t);
  auto best = std::min_element(
      all.begin(), all.end(),
      [](const CollectiveCost& a, const CollectiveCost& b) { return a.ns < b.ns; });
  return *best;
}

}  // namespace ts::mesh

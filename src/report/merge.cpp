#include "tilesweep/report/merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "config_delta.h"
#include "tilesweep/base/error.h"
#include "tilesweep/base/hash.h"

namespace ts::report {
namespace {

using Key = std::tuple<std::string, std::string, std::string, std::string>;

// Adds `from` to `into`, refusing a name whose text differs from the one already there.
void union_texts(std::map<std::string, std::string>& into,
                 std::map<std::string, std::string>& owner,
                 const std::map<std::string, std::string>& from, const std::string& path,
                 const char* what) {
  for (const auto& [name, text] : from) {
    auto [it, fresh] = into.emplace(name, text);
    if (fresh) {
      owner[name] = path;
    } else if (it->second != text) {
      throw UserError(fmt::format(
          "error: cannot merge '{}' and '{}': {} '{}' has a different description text in "
          "each (the archives come from different {} descriptions; merge only archives of "
          "the same ones)",
          owner[name], path, what, name, what));
    }
  }
}

store::Meta merged_meta(const std::vector<LoadedArchive>& inputs, const std::string& tool_version) {
  store::Meta m;
  m.tool_version = tool_version;
  m.job_name = "merge";
  std::map<std::string, std::string> target_owner, kernel_owner;
  std::uint64_t h = hash_bytes("merge");
  m.status = "complete";
  for (const auto& l : inputs) {
    const store::Meta& s = l.archive.meta;
    union_texts(m.targets, target_owner, s.targets, l.path, "target");
    union_texts(m.kernel_sources, kernel_owner, s.kernel_sources, l.path, "kernel file");
    m.job_name += (&l == &inputs.front() ? " of " : " + ") + s.job_name;
    h = hash_combine(h, hash_bytes(s.job_hash));
    m.ranks = std::max(m.ranks, s.ranks), m.threads = std::max(m.threads, s.threads);
    if (!s.start_time.empty() && (m.start_time.empty() || s.start_time < m.start_time))
      m.start_time = s.start_time;
    m.end_time = std::max(m.end_time, s.end_time);
    for (const auto& [phase, sec] : s.phase_seconds) m.phase_seconds[phase] += sec;
    if (s.status != "complete") m.status = "partial";
  }
  m.job_hash = fmt::format("{:016x}", h);
  return m;
}

bool better(double latency, double than) {
  if (std::isnan(latency)) return false;
  return std::isnan(than) || latency < than;
}

template <class Rec>
void append(std::vector<Rec>& into, const std::vector<Rec>& from) {
  into.insert(into.end(), from.begin(), from.end());
}

}  // namespace

Merged merge_archives(const std::vector<LoadedArchive>& inputs, const std::string& tool_version) {
  Merged out;
  store::Archive& a = out.archive;
  a.meta = merged_meta(inputs, tool_version);
  std::map<Key, std::pair<store::BestRecord, std::int32_t>> best;
  for (const auto& l : inputs) {
    const auto cand0 = static_cast<std::int64_t>(a.candidates.size());
    const auto proof0 = static_cast<std::int64_t>(a.proofs.size());
    const auto prog0 = static_cast<std::int64_t>(a.progress.size());
    const auto source0 = static_cast<std::int32_t>(out.provenance.sources.size());
    for (store::SourceRecord s : l.provenance.sources) {
      s.candidates_first += cand0, s.proofs_first += proof0, s.progress_first += prog0;
      out.provenance.sources.push_back(std::move(s));
    }
    append(a.candidates, l.archive.candidates);
    append(a.proofs, l.archive.proofs);
    append(a.progress, l.archive.progress);
    for (std::size_t r = 0; r < l.archive.best.size(); ++r) {
      const store::BestRecord& b = l.archive.best[r];
      std::int32_t src = source0 + l.provenance.best_origin[r].source;
      auto [it, fresh] = best.try_emplace(Key{b.kernel, b.target, b.shape, b.mesh}, b, src);
      if (!fresh && better(b.latency_ns, it->second.first.latency_ns)) it->second = {b, src};
    }
  }
  for (const auto& [key, row] : best) {
    a.best.push_back(row.first);
    out.provenance.best_origin.push_back(
        {row.first.kernel, row.first.target, row.first.shape, row.first.mesh, row.second});
  }
  return out;
}

namespace {

// Whether `after` is more than `threshold_pct` percent away from `before` (NaN never is).
bool moved(double before, double after, double threshold_pct) {
  return std::abs(after / before - 1) * 100 > threshold_pct;
}

BestChange change_of(const store::BestRecord* x, const store::BestRecord* y, double threshold_pct) {
  const store::BestRecord& k = x ? *x : *y;
  BestChange c{BestChange::Kind::Changed, k.kernel, k.target, k.shape, k.mesh, store::kNotComputed,
               store::kNotComputed,       -1,       -1,       "",      ""};
  if (x) c.before_ns = x->latency_ns, c.before_index = x->index, c.before_config = x->config;
  if (y) c.after_ns = y->latency_ns, c.after_index = y->index, c.after_config = y->config;
  using K = BestChange::Kind;
  if (!y)
    c.kind = K::Removed;
  else if (!x)
    c.kind = K::Added;
  if (!x || !y) return c;
  // A program found or lost always counts; a latency change only beyond the threshold.
  bool beyond = std::isnan(c.before_ns) != std::isnan(c.after_ns) ||
                moved(c.before_ns, c.after_ns, threshold_pct);
  if (beyond && better(c.before_ns, c.after_ns))
    c.kind = K::Regression;
  else if (beyond && better(c.after_ns, c.before_ns))
    c.kind = K::Improvement;
  return c;
}

bool same_candidate(const store::BestRecord& x, const store::BestRecord& y) {
  return x.variant == y.variant && x.choice == y.choice && x.index == y.index &&
         x.config == y.config;
}

bool same(const store::BestRecord& x, const store::BestRecord& y) {
  bool same_latency =
      x.latency_ns == y.latency_ns || (std::isnan(x.latency_ns) && std::isnan(y.latency_ns));
  return same_latency && same_candidate(x, y);
}

double ratio(const BestChange& c) { return c.after_ns / c.before_ns; }

// The order of regressions and improvements: a lost program is the largest slowdown, a found one
// the largest speedup (NaN ratios would break the sort's strict weak order).
double order_ratio(const BestChange& c) {
  if (std::isnan(c.after_ns) && !std::isnan(c.before_ns)) return HUGE_VAL;
  if (std::isnan(c.before_ns) && !std::isnan(c.after_ns)) return 0;
  return ratio(c);
}

}  // namespace

std::vector<BestChange> diff_best(const store::Archive& a, const store::Archive& b,
                                  double threshold_pct) {
  std::map<Key, std::pair<const store::BestRecord*, const store::BestRecord*>> keys;
  for (const auto& r : a.best) keys[Key{r.kernel, r.target, r.shape, r.mesh}].first = &r;
  for (const auto& r : b.best) keys[Key{r.kernel, r.target, r.shape, r.mesh}].second = &r;
  std::vector<BestChange> out;
  for (const auto& [key, p] : keys)
    if (!p.first || !p.second || !same(*p.first, *p.second)) {
      BestChange c = change_of(p.first, p.second, threshold_pct);
      bool only_latency =
          c.kind == BestChange::Kind::Changed && same_candidate(*p.first, *p.second);
      if (!only_latency) out.push_back(std::move(c));
    }
  std::stable_sort(out.begin(), out.end(), [](const BestChange& x, const BestChange& y) {
    if (x.kind != y.kind) return x.kind < y.kind;
    if (x.kind == BestChange::Kind::Regression) return order_ratio(x) > order_ratio(y);
    if (x.kind == BestChange::Kind::Improvement) return order_ratio(x) < order_ratio(y);
    return false;
  });
  return out;
}

std::string describe(const BestChange& c) {
  static const char* names[] = {"regression", "removed", "improvement", "changed", "added"};
  std::string head = fmt::format("{:<12} {} {} {} mesh {}: ", names[static_cast<int>(c.kind)],
                                 c.kernel, c.target, c.shape.empty() ? "-" : c.shape, c.mesh);
  auto ns = [](double v) {
    return std::isnan(v) ? std::string("none") : fmt::format("{:.1f} ns", v);
  };
  if (c.kind == BestChange::Kind::Removed)
    return head + fmt::format("{} (only in the first archive)", ns(c.before_ns));
  if (c.kind == BestChange::Kind::Added)
    return head + fmt::format("{} (only in the second archive)", ns(c.after_ns));
  std::string s = head + fmt::format("{} -> {}", ns(c.before_ns), ns(c.after_ns));
  if (std::isfinite(ratio(c)) && c.kind != BestChange::Kind::Changed) {
    double pct = 100 * (ratio(c) - 1);  // a change under 0.05 % with more digits than "+0.0%"
    s += std::abs(pct) < 0.05 ? fmt::format(" ({:+.3f}%)", pct) : fmt::format(" ({:+.1f}%)", pct);
  }
  if (c.before_index != c.after_index || c.before_config != c.after_config) {
    std::string knobs = detail::config_delta(c.before_config, c.after_config);
    s += fmt::format("; candidate {} -> {}{}", c.before_index, c.after_index,
                     knobs.empty() ? "" : ": " + knobs);
  }
  return s;
}

}  // namespace ts::report

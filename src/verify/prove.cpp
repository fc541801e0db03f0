#include "tilesweep/verify/prove.h"

#include <chrono>

#include "query.h"

namespace ts::verify {

namespace {

using Clock = std::chrono::steady_clock;

std::string signature(const ir::Param& p) {
  return p.name + ": " + (p.scalar ? std::string("scalar") : sem::format_shape(p.shape));
}

std::string names(const ir::Kernel& k) {
  std::string s;
  for (const auto& p : k.params) s += (s.empty() ? "" : ", ") + p.name;
  return k.name + "(" + s + ")";
}

// b's parameter i is a's parameter positions[i], by name.
std::vector<int> by_name(const ir::Kernel& a, const ir::Kernel& b) {
  std::vector<int> positions;
  for (const auto& q : b.params) {
    int found = -1;
    for (std::size_t j = 0; j < a.params.size(); ++j)
      if (a.params[j].name == q.name) found = static_cast<int>(j);
    if (found < 0)
      throw UserError(fmt::format(
          "error: parameter '{}' of '{}' has no namesake in '{}' (parameters are matched by name: "
          "{} vs {}); give the parameters the same names",
          q.name, b.name, a.name, names(a), names(b)));
    positions.push_back(found);
  }
  return positions;
}

}  // namespace

std::vector<int> match_parameters(const ir::Kernel& a, const ir::Kernel& b, bool match_by_name) {
  if (a.params.size() != b.params.size())
    throw UserError(fmt::format(
        "error: '{}' takes {} parameters but '{}' takes {}; equivalence needs the same inputs",
        a.name, a.params.size(), b.name, b.params.size()));
  std::vector<int> positions(b.params.size());
  for (std::size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int>(i);
  if (match_by_name) positions = by_name(a, b);
  for (std::size_t i = 0; i < b.params.size(); ++i) {
    const auto &p = a.params[positions[i]], &q = b.params[i];
    bool same = p.scalar == q.scalar && p.shape.size() == q.shape.size();
    for (std::size_t d = 0; same && d < p.shape.size(); ++d) same = p.shape[d] == q.shape[d];
    if (!same)
      throw UserError(fmt::format(
          "error: parameter {} is {} in '{}' but {} in '{}'; equivalence needs the same inputs",
          match_by_name ? "'" + q.name + "'" : std::to_string(i + 1), signature(p), a.name,
          signature(q), b.name));
  }
  return positions;
}

Verdict prove_equivalent(const ir::Kernel& a, const ir::Kernel& b, const ProveOptions& options,
                         VerdictCache* cache) {
  std::vector<int> positions = match_parameters(a, b, options.match_by_name);
  std::string key;
  if (cache) {
    key = VerdictCache::key(a, b, positions);
    if (auto v = cache->find(key)) {
      v->cached = true;
      v->ms = 0;
      return *v;
    }
  }
  auto start = Clock::now();
  Verdict v;
  try {
    Query q(a, b, positions, options);
    v = q.run();
    v.rlimit_used = q.max_check();
  } catch (const z3::exception& e) {
    v.kind = VerdictKind::Unknown;
    v.reason = std::string("solver error: ") + e.msg();
  }
  v.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (cache) cache->insert(key, v);
  return v;
}

}  // namespace ts::verify

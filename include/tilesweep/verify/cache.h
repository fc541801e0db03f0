// Verdicts keyed by a canonical form of the query (parameters by matched position, dims by order
// of first appearance, node ids by topological position, element expressions in full), so the same
// question is never solved twice in one process; optionally persisted to a file and reused across
// runs.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/verify/verdict.h"

namespace ts::verify {

// Text of a kernel with names abstracted away: two kernels with the same canonical text
// compute the same function of their (positional) parameters.
std::string canonical_text(const ir::Kernel& k);

class VerdictCache {
 public:
  VerdictCache() = default;
  // Loads verdicts from `path` if it exists (a missing file is an empty cache); saves there.
  explicit VerdictCache(std::string path);

  std::optional<Verdict> find(const std::string& key) const;
  void insert(const std::string& key, const Verdict& v);
  std::size_t size() const;
  std::size_t hits() const;
  std::size_t misses() const;  // finds that found nothing: questions a solver had to answer
  // Writes the cache file (when constructed with a path). Only Equivalent and NotEquivalent
  // verdicts are persisted: Unknown may become known with a longer timeout.
  void save() const;

  // Every verdict as text, Unknown ones included (for handing a process's proofs to another,
  // e.g. rank 0 to the other ranks of a sweep); absorb() adds such a text's verdicts.
  std::string text() const;
  void absorb(const std::string& text);

  // Built from the canonical query structure: dims renamed by position, b's parameters by the
  // position of the parameter of a they match (`b_positions`), every node's instantiated element
  // expression (so two --ops files that define an op differently give different keys), and the
  // cache version.
  static std::string key(const ir::Kernel& a, const ir::Kernel& b,
                         const std::vector<int>& b_positions);

 private:
  mutable std::mutex mu_;
  std::map<std::string, Verdict> verdicts_;
  mutable std::size_t hits_ = 0, misses_ = 0;
  std::string path_;
};

}  // namespace ts::verify

// One equivalence query: both kernels encoded into one Z3 context, the domain checked (the same
// non-empty set of dims), then per output its shape, its definedness and its value. Every
// solver check runs under a deterministic resource limit (rlimit), so a verdict never depends
// on the machine's load; the wall-clock timeout is only a safety net.
#pragma once

#include <z3++.h>

#include <optional>
#include <string>
#include <vector>

#include "encoder.h"
#include "normal_form.h"
#include "tilesweep/verify/prove.h"

namespace ts::verify {

class Query {
 public:
  Query(const ir::Kernel& a, const ir::Kernel& b, std::vector<int> b_positions,
        const ProveOptions& o);
  Verdict run();
  // Z3 resource units of the most expensive check so far.
  std::uint64_t max_check() const { return max_check_; }

 private:
  std::optional<Verdict> domain();
  std::optional<Verdict> declared_shapes(const ir::Kernel& k);
  std::optional<Verdict> shapes(std::size_t o, const std::vector<sem::Dim>& sa,
                                const std::vector<sem::Dim>& sb);
  std::optional<Verdict> output(std::size_t o, Encoder& ea, Encoder& eb);
  // Checks `claim` (under the assertions so far) for a model; what: for an Unknown's reason.
  z3::check_result check(const z3::expr& claim, const std::string& what,
                         std::optional<Verdict>& unknown);
  std::uint64_t resources_used();
  void add_facts(const Encoder& e, std::size_t& done);

  Verdict refuted(const std::string& why, std::optional<Counterexample> c);
  Verdict unknown(const std::string& why);
  // A witness from the reference interpreter, or Unknown; `definedness`: the model differs in
  // where the outputs are defined (then `what` is the refutation's reason).
  Verdict refuted_or_unknown(const std::string& what, const sem::DimEnv& hint, bool definedness);

  const ir::Kernel& a_;
  const ir::Kernel& b_;
  std::vector<int> b_positions_;
  ProveOptions opts_;
  z3::context ctx_;  // one per query, so per thread
  Symbols sym_;
  NormalForm nf_;
  z3::solver solver_;
  std::size_t facts_a_ = 0, facts_b_ = 0;
  std::uint64_t max_check_ = 0;
};

}  // namespace ts::verify

// Proofs of every rule, in the manner of Halide's rule verifier: each pair `<rule>_lhs`,
// `<rule>_rhs` in true_identities.py must be proved equivalent, no pair in
// false_identities.py may ever be proved (each is refuted with a witness), and the true
// identities of unknown_identities.py (beyond the encoding today) must be answered `unknown`,
// never refuted. Parameters are matched by name, as `tilesweep prove` does. The counts are pinned
// so a rule cannot silently drop out. scripts/check_identities.py checks the files with NumPy.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/verify/prove.h"

namespace ts::verify {
namespace {

namespace fs = std::filesystem;

// Pinned: change these only together with the rule files.
constexpr std::size_t kTrueRules = 106;
constexpr std::size_t kFalseRules = 56;
constexpr std::size_t kUnknownRules = 4;
constexpr int kFalseRefuted = 56;

ProveOptions options() {
  ProveOptions o;
  o.match_by_name = true;
  return o;
}

struct Rule {
  std::string name;
  const ir::Kernel* lhs = nullptr;
  const ir::Kernel* rhs = nullptr;
};

const ir::Module& module(const std::string& file) {
  static std::map<std::string, ir::Module> cache;
  auto it = cache.find(file);
  if (it == cache.end()) {
    std::string path = (fs::path(TS_SOURCE_DIR) / "tests" / "verify" / file).string();
    it = cache.emplace(file, ir::load_module(path, sem::OpTable::builtin())).first;
  }
  return it->second;
}

std::vector<Rule> rules(const std::string& file) {
  std::map<std::string, Rule> by_name;
  for (const auto& k : module(file).kernels) {
    auto cut = k.name.rfind('_');
    std::string base = k.name.substr(0, cut), side = k.name.substr(cut + 1);
    Rule& r = by_name[base];
    r.name = base;
    (side == "lhs" ? r.lhs : r.rhs) = &k;
  }
  std::vector<Rule> out;
  for (auto& [n, r] : by_name) out.push_back(r);
  return out;
}

std::vector<std::string> names(const std::string& file) {
  std::vector<std::string> out;
  for (const auto& r : rules(file)) out.push_back(r.name);
  return out;
}

const Rule& find(const std::string& file, const std::string& name) {
  static std::map<std::string, std::vector<Rule>> all;
  if (!all.count(file)) all[file] = rules(file);
  for (const auto& r : all[file])
    if (r.name == name) return r;
  throw std::runtime_error("no rule " + name);
}

class TrueRules : public ::testing::TestWithParam<std::string> {};
class FalseRules : public ::testing::TestWithParam<std::string> {};
class UnknownRules : public ::testing::TestWithParam<std::string> {};

TEST_P(TrueRules, Proved) {
  const Rule& r = find("true_identities.py", GetParam());
  ASSERT_TRUE(r.lhs && r.rhs) << "rule needs both _lhs and _rhs";
  Verdict v = prove_equivalent(*r.lhs, *r.rhs, options());
  EXPECT_EQ(v.kind, VerdictKind::Equivalent)
      << verdict_name(v.kind) << ": " << v.reason
      << (v.counterexample ? " " + v.counterexample->str() : "");
}

TEST_P(FalseRules, NeverProved) {
  const Rule& r = find("false_identities.py", GetParam());
  ASSERT_TRUE(r.lhs && r.rhs) << "rule needs both _lhs and _rhs";
  Verdict v = prove_equivalent(*r.lhs, *r.rhs, options());
  EXPECT_NE(v.kind, VerdictKind::Equivalent) << v.reason;
  // A refutation always carries a concrete witness.
  if (v.kind == VerdictKind::NotEquivalent) {
    EXPECT_TRUE(v.counterexample.has_value());
  }
}

TEST_P(UnknownRules, AnsweredUnknownWithAReason) {
  const Rule& r = find("unknown_identities.py", GetParam());
  ASSERT_TRUE(r.lhs && r.rhs) << "rule needs both _lhs and _rhs";
  Verdict v = prove_equivalent(*r.lhs, *r.rhs, options());
  EXPECT_EQ(v.kind, VerdictKind::Unknown) << verdict_name(v.kind);
  EXPECT_FALSE(v.reason.empty());
}

INSTANTIATE_TEST_SUITE_P(Identities, UnknownRules,
                         ::testing::ValuesIn(names("unknown_identities.py")),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Identities, TrueRules, ::testing::ValuesIn(names("true_identities.py")),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Identities, FalseRules, ::testing::ValuesIn(names("false_identities.py")),
                         [](const auto& info) { return info.param; });

TEST(RuleFiles, PinnedCounts) {
  EXPECT_EQ(rules("true_identities.py").size(), kTrueRules);
  EXPECT_EQ(rules("false_identities.py").size(), kFalseRules);
  EXPECT_EQ(rules("unknown_identities.py").size(), kUnknownRules);
}

TEST(FalseRulesAreRefuted, MostWithAWitness) {
  int refuted = 0;
  for (const auto& r : rules("false_identities.py"))
    refuted += prove_equivalent(*r.lhs, *r.rhs, options()).kind == VerdictKind::NotEquivalent;
  EXPECT_EQ(refuted, kFalseRefuted);
}

}  // namespace
}  // namespace ts::verify

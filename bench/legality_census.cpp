// Legality census: sampled candidates of the 34 suite kernels (jobs/axon-suite.toml and
// jobs/nkibench.toml, each kernel's original variant at its first shape) on trn1, trn2 and trn3,
// every instruction checked against the target's rules (isa.toml [legality]). Prints, per
// target, the instructions checked and those breaking each rule, with the commonest breaches;
// and how many sampled candidates beat their attainable bound (sim/roofline.h).
// Usage: bench_legality_census [candidates per kernel, default 64]
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <map>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/candidate_space.h"
#include "tilesweep/lower/legal_engine.h"
#include "tilesweep/lower/unsupported.h"
#include "tilesweep/sim/roofline.h"
#include "tilesweep/sim/simulate.h"
#include "tilesweep/sweep/job.h"

namespace {

struct Tally {
  std::int64_t programs = 0, instructions = 0, illegal_programs = 0, beat_attainable = 0,
               simulated = 0;
  std::map<std::string, std::int64_t> by_rule, by_what;
  std::vector<std::string> without_program;  // kernels none of whose sampled candidates builds
};

void census(const ts::sweep::JobKernel& jk, const ts::target::Target& t, int per_kernel,
            ts::lower::SynthesisCache& cache, Tally& tally) {
  ts::ir::Module m = ts::ir::load_module(jk.file, ts::sem::OpTable::builtin());
  const ts::ir::Kernel& k = m.kernel(jk.name);
  auto dims = ts::sweep::shape_env(jk.shapes.front());
  ts::lower::KernelChoices choices = ts::lower::instruction_choices(k, t.isa, cache);
  ts::lower::CandidateSpace space({{&k, &choices}}, t, dims);
  ts::sim::Roofline bound = ts::sim::roofline(k, dims, t);
  std::int64_t step = std::max<std::int64_t>(1, space.size() / per_kernel);
  const std::int64_t programs_before = tally.programs;
  for (std::int64_t i = 0; i < space.size(); i += step) {
    ts::lower::Lowered<ts::lower::Program> program = space.materialize(i);
    if (!program) continue;
    const ts::lower::Program& p = *program;
    ++tally.programs;
    tally.instructions += static_cast<std::int64_t>(p.insts.size());
    auto breaches = ts::lower::legality_breaches(p, t.legality);
    if (!breaches.empty()) ++tally.illegal_programs;
    for (const auto& b : breaches) {
      const auto& in = p.insts[static_cast<std::size_t>(b.inst)];
      ++tally.by_rule[ts::target::rule_name(b.breach.rule)];
      ++tally.by_what[fmt::format("{}: {} on {}", ts::target::rule_name(b.breach.rule),
                                  in.spec->op.name, ts::sem::engine_name(in.engine))];
    }
    ts::sim::SimResult r = ts::sim::simulate(p, t);
    if (!r.feasible) continue;
    ++tally.simulated;
    if (r.latency_ns < bound.attainable_ns * (1 - 1e-9)) ++tally.beat_attainable;
  }
  if (tally.programs == programs_before) tally.without_program.push_back(jk.label);
}

}  // namespace

int main(int argc, char** argv) {
  int per_kernel = argc > 1 ? std::atoi(argv[1]) : 64;
  std::vector<ts::sweep::JobKernel> kernels;
  for (const char* job : {"axon-suite.toml", "nkibench.toml"}) {
    auto j = ts::sweep::load_job(std::string(TS_SOURCE_DIR) + "/jobs/" + job,
                                 ts::sweep::OutputCheck::Skip);
    kernels.insert(kernels.end(), j.kernels.begin(), j.kernels.end());
  }
  std::cout << fmt::format(
      "{} kernels, up to {} candidates each (evenly spaced over the space)\n\n", kernels.size(),
      per_kernel);
  std::cout << "| target | programs | instructions | illegal programs | memory | operator | "
               "requirement | simulated | beat attainable |\n"
               "|---|---|---|---|---|---|---|---|---|\n";
  std::map<std::string, Tally> tallies;
  for (const char* name : {"trn1", "trn2", "trn3"}) {
    const auto& t = ts::target::builtin_target(name);
    ts::lower::SynthesisCache cache;
    Tally& tally = tallies[name];
    for (const auto& jk : kernels) census(jk, t, per_kernel, cache, tally);
    std::cout << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", name,
                             tally.programs, tally.instructions, tally.illegal_programs,
                             tally.by_rule["memory"], tally.by_rule["operator"],
                             tally.by_rule["requirement"], tally.simulated, tally.beat_attainable);
  }
  for (const auto& [name, tally] : tallies) {
    std::cout << fmt::format("\n{}: illegal instructions by rule, instruction and engine\n", name);
    for (const auto& [what, n] : tally.by_what) std::cout << fmt::format("  {:>7}  {}\n", n, what);
    std::cout << fmt::format("{}: kernels without a program: {}\n", name,
                             tally.without_program.empty()
                                 ? "none"
                                 : fmt::format("{}", fmt::join(tally.without_program, ", ")));
  }
  return 0;
}

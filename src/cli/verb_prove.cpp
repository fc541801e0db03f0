// `tilesweep prove A.py B.py [--kernel K]`: decide whether two kernels compute the same
// function for all shapes. First word: equivalent / not equivalent / unknown; exit 0 / 1 / 3.
#include <iostream>

#include "args.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/verify/prove.h"
#include "verbs.h"

namespace ts::cli {

VerbRun add_prove(CLI::App& app) {
  auto* cmd = app.add_subcommand("prove",
                                 "decide with Z3 whether two kernels are equivalent for all shapes "
                                 "(exit 0 equivalent, 1 not, 3 unknown)");
  struct Opts {
    std::string a, b, kernel, kernel_b, cache;
    unsigned timeout_ms = 60000;
    std::uint64_t rlimit = verify::ProveOptions{}.rlimit;
    std::vector<std::string> ops;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("a", o->a, "first kernel file")->required();
  cmd->add_option("b", o->b, "second kernel file")->required();
  cmd->add_option("-k,--kernel", o->kernel,
                  "kernel name in both files (optional when each has one kernel)");
  cmd->add_option("--kernel-b", o->kernel_b, "kernel name in the second file, when it differs");
  cmd->add_option(
         "--rlimit", o->rlimit,
         "solver budget per check, in Z3 resource units (deterministic: decides the verdict)")
      ->check(CLI::PositiveNumber);
  cmd->add_option(
         "--timeout", o->timeout_ms,
         "wall-clock safety net per solver check, ms (the verdict-deciding budget is --rlimit)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--cache", o->cache, "proof cache file, read and updated");
  cmd->add_option("--ops", o->ops, "extra op semantics file (TOML)");
  return [o, cmd]() {
    if (!*cmd) return -1;
    sem::OpTable ops = load_ops(o->ops);
    ir::Module ma = ir::load_module(o->a, ops);
    ir::Module mb = ir::load_module(o->b, ops);
    const ir::Kernel& ka = ma.kernel(o->kernel);
    const ir::Kernel& kb = mb.kernel(o->kernel_b.empty() ? o->kernel : o->kernel_b);
    std::unique_ptr<verify::VerdictCache> cache;
    if (!o->cache.empty()) cache = std::make_unique<verify::VerdictCache>(o->cache);
    verify::ProveOptions options;
    options.timeout_ms = o->timeout_ms;
    options.rlimit = o->rlimit;
    options.match_by_name = true;
    verify::Verdict v = verify::prove_equivalent(ka, kb, options, cache.get());
    if (cache) cache->save();
    std::cout << verify::verdict_name(v.kind);
    if (v.kind == verify::VerdictKind::NotEquivalent) {
      std::cout << ": " << v.reason;
      if (v.counterexample) std::cout << "\ncounterexample: " << v.counterexample->str();
    } else if (v.kind == verify::VerdictKind::Unknown) {
      std::cout << ": " << v.reason;
    }
    std::cout << fmt::format("\n({}.{} vs {}.{}, {:.1f} ms{})\n", o->a, ka.name, o->b, kb.name,
                             v.ms, v.cached ? ", cached" : "");
    switch (v.kind) {
      case verify::VerdictKind::Equivalent:
        return 0;
      case verify::VerdictKind::NotEquivalent:
        return 1;
      case verify::VerdictKind::Unknown:
        return 3;
    }
    return 3;
  };
}

}  // namespace ts::cli

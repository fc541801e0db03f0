// `tilesweep variants FILE --kernel K`: the algebraic variants found by operator propagation,
// with the proof of each step and its time.
#include <iostream>

#include "kernel_options.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/graph_printer.h"
#include "tilesweep/mutate/propagate.h"
#include "tilesweep/verify/prove.h"
#include "verbs.h"

namespace ts::cli {

VerbRun add_variants(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "variants",
      "list the proved algebraic variants of a kernel (operator propagation) with proof times");
  struct Opts {
    KernelOptions kernel;
    std::string cache;
    unsigned timeout_ms = verify::ProveOptions{}.timeout_ms;  // a safety net: the rlimit decides
    int max_variants = 64;
    bool show = false, log = false;
  };
  auto o = std::make_shared<Opts>();
  o->kernel.add_file(cmd);
  o->kernel.add_kernel(cmd);
  cmd->add_option("--timeout", o->timeout_ms,
                  "wall-clock safety net per solver check, ms (default 60000; the deterministic "
                  "rlimit budget decides verdicts)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-variants", o->max_variants, "stop after this many variants")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--cache", o->cache, "proof cache file, read and updated");
  cmd->add_flag("--show", o->show, "print each variant's full graph");
  cmd->add_flag("--log", o->log, "print every equivalence query, proved or not");
  o->kernel.add_ops(cmd);
  return [o, cmd]() {
    if (!*cmd) return -1;
    LoadedKernel loaded(o->kernel);
    const ir::Kernel& k = loaded.kernel();
    verify::VerdictCache cache(o->cache);
    mutate::PropagateOptions opts;
    opts.max_variants = o->max_variants;
    opts.prove.timeout_ms = o->timeout_ms;
    mutate::VariantSet set = mutate::propagate(k, opts, &cache);
    cache.save();
    int proved = 0, unknown = 0;
    for (const auto& p : set.proofs) {
      proved += p.verdict.proved();
      unknown += p.verdict.kind == verify::VerdictKind::Unknown;
    }
    std::cout << fmt::format(
        "kernel {}: {} variant(s), {}; {} swap queries ({} proved, {} unknown, {} cached), {:.1f} "
        "ms in the solver\n",
        k.name, set.variants.size(), mutate::stop_reason_name(set.stop), set.proofs.size(), proved,
        unknown, cache.hits(), set.proof_ms);
    for (std::size_t i = 0; i < set.variants.size(); ++i) {
      const auto& v = set.variants[i];
      std::string how = "original";
      for (const auto& p : set.proofs)
        if (p.to_variant == static_cast<int>(i))
          how = fmt::format("from {}: {} — {} in {:.1f} ms{}", v.parent, v.step,
                            verify::verdict_name(p.verdict.kind), p.verdict.ms,
                            p.verdict.cached ? " (cached)" : "");
      std::cout << fmt::format("variant {} [{:016x}] {}\n    {}\n", i, v.hash, how,
                               ir::expression_text(v.kernel));
      if (o->show) std::cout << ir::print_kernel(v.kernel);
    }
    if (o->log) {
      std::cout << "queries:\n";
      for (const auto& p : set.proofs)
        std::cout << fmt::format(
            "  variant {}: {} past {} (clone degree {}): {}{} {:.1f} ms\n", p.from_variant, p.op1,
            p.op2, p.clone_degree, verify::verdict_name(p.verdict.kind),
            p.verdict.reason.empty() ? "" : " (" + p.verdict.reason + ")", p.verdict.ms);
    }
    return 0;
  };
}

}  // namespace ts::cli

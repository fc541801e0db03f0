// `tilesweep lookup LIB.h5 --kernel K --target T --shape M=..,N=.. [--mesh 2x2]`: the library
// entry for a shape, exact or nearest (the rule: include/tilesweep/report/lookup.h).
#include <fmt/format.h>

#include <iostream>

#include "args.h"
#include "tilesweep/report/lookup.h"
#include "verbs.h"

namespace ts::cli {

namespace {

struct LookupOpts {
  std::string library, kernel, target, shape, mesh = "1";
  bool nki = false;
};

}  // namespace

VerbRun add_lookup(CLI::App& app) {
  auto* cmd = app.add_subcommand("lookup", "the best library entry for a shape: exact, else nearest (and the rule used)");
  auto o = std::make_shared<LookupOpts>();
  cmd->add_option("library", o->library, "shape library written by `select`")->required();
  cmd->add_option("-k,--kernel", o->kernel, "kernel (its label in the archives)")->required();
  cmd->add_option("-t,--target", o->target, "target: trn1, trn2, trn3")->required();
  cmd->add_option("-s,--shape", o->shape, "dims, e.g. M=4096,N=2048")->required();
  cmd->add_option("--mesh", o->mesh, "device mesh, default 1");
  cmd->add_flag("--nki", o->nki, "also print the entry's NKI source");
  return [o, cmd]() {
    if (!*cmd) return -1;
    sem::DimEnv dims = parse_shape_arg(o->shape);
    store::Library lib = store::read_library(o->library);
    report::LookupAnswer a = report::lookup(lib, o->library, o->kernel, o->target, dims, o->mesh);
    const store::LibraryEntry& e = *a.entry;
    std::cout << fmt::format("{} {} {} mesh {}: {}\n", o->kernel, o->target, o->shape, o->mesh, a.rule);
    std::cout << fmt::format("  entry: {} {} {} mesh {}{}\n", e.kernel, e.target, e.shape, e.mesh,
                             e.sharding.empty() ? "" : ", sharding " + e.sharding);
    std::cout << fmt::format("  latency {:.1f} ns (simulated), roofline {:.1f} ns, {:.1f}% of roofline, heuristic {:.1f} ns\n",
                             e.latency_ns, e.roofline_ns, e.roofline_pct, e.heuristic_ns);
    std::cout << fmt::format("  candidate {} (variant {}, choice {}): {}\n", e.index, e.variant, e.choice, e.config);
    std::cout << fmt::format("  from {} (job {}, tilesweep {})\n", e.archive, e.job_name, e.tool_version);
    if (!a.exact) {
      // The entry's kernel is built for its own shape (sizes, trip counts, its asserts): never
      // hand it out for another.
      std::cout << fmt::format("  note: {} was not swept; the entry above is the nearest, its configuration is a "
                               "suggestion, and its NKI kernel is built for {} only (not printed). For NKI at this "
                               "shape run: tilesweep score KERNEL_FILE --kernel {} --target {} --shape {} --emit-nki DIR\n",
                               o->shape, e.shape, o->kernel, o->target, o->shape);
      return 0;
    }
    if (!e.nki_error.empty()) std::cout << "  no NKI source: " << e.nki_error << "\n";
    if (o->nki && !e.nki.empty()) std::cout << "\n" << e.nki;
    return 0;
  };
}

}  // namespace ts::cli

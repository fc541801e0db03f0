// `tilesweep lookup LIB.h5 --kernel K --target T --shape M=..,N=.. [--mesh 2x2]`: the library
// entry for a shape, exact or nearest (the rule: include/tilesweep/report/lookup.h).
#include <fmt/format.h>

#include <iostream>

#include "args.h"
#include "tilesweep/base/error.h"
#include "tilesweep/report/lookup.h"
#include "tilesweep/report/select.h"
#include "verbs.h"

namespace ts::cli {

namespace {

struct LookupOpts {
  std::string library, kernel, target, shape, mesh = "1", nki_api = "current",
                                              nki_shapes = "generic";
  bool nki = false;
};

// The entry's configuration re-lowered at the asked shape, from the archive it came from; the
// NKI source and simulated latency, or why not.
report::NkiEmitter::Reinstance reinstantiate(const store::LibraryEntry& e, const sem::DimEnv& dims,
                                             lower::NkiApi api, bool generic) {
  report::LoadedArchive a;
  try {
    a = report::load_archive(e.archive);
  } catch (const UserError& err) {
    return {"", fmt::format("its archive '{}' cannot be read: {}", e.archive, err.what())};
  }
  for (std::size_t r = 0; r < a.archive.best.size(); ++r) {
    const store::BestRecord& b = a.archive.best[r];
    if (b.kernel != e.kernel || b.target != e.target || b.shape != e.shape || b.mesh != e.mesh ||
        b.index != e.index)
      continue;
    report::NkiEmitter emitter;
    return emitter.reinstantiate(a.archive.meta,
                                 a.provenance.sources[a.provenance.best_origin[r].source], b, dims,
                                 api, generic);
  }
  return {"", fmt::format("archive '{}' no longer holds the entry's candidate", e.archive)};
}

}  // namespace

VerbRun add_lookup(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "lookup", "the best library entry for a shape: exact, else nearest (and the rule used)");
  auto o = std::make_shared<LookupOpts>();
  cmd->add_option("library", o->library, "shape library written by `select`")->required();
  cmd->add_option("-k,--kernel", o->kernel, "kernel (its label in the archives)")->required();
  cmd->add_option("-t,--target", o->target, "target: trn1, trn2, trn3")->required();
  cmd->add_option("-s,--shape", o->shape, "dims, e.g. M=4096,N=2048")->required();
  cmd->add_option("--mesh", o->mesh, "device mesh, default 1");
  cmd->add_flag("--nki", o->nki,
                "also print the entry's NKI source (for a shape not swept: the entry's "
                "configuration re-lowered at it)");
  cmd->add_option("--nki-api", o->nki_api,
                  "NKI dialect: current (nki, Neuron SDK 2.27+) or legacy (neuronxcc.nki, <= 2.26)")
      ->check(CLI::IsMember({"current", "legacy"}));
  cmd->add_option("--nki-shapes", o->nki_shapes,
                  "for a shape not swept: generic (default) re-lowers the configuration as `lower "
                  "--nki-shapes generic` writes it; fixed: asserted to the asked shape")
      ->check(CLI::IsMember({"generic", "fixed"}));
  return [o, cmd]() {
    if (!*cmd) return -1;
    sem::DimEnv dims = parse_shape_arg(o->shape);
    store::Library lib = store::read_library(o->library);
    report::LookupAnswer a = report::lookup(lib, o->library, o->kernel, o->target, dims, o->mesh);
    const store::LibraryEntry& e = *a.entry;
    std::cout << fmt::format("{} {} {} mesh {}: {}\n", o->kernel, o->target, o->shape, o->mesh,
                             a.rule);
    std::cout << fmt::format("  entry: {} {} {} mesh {}{}\n", e.kernel, e.target, e.shape, e.mesh,
                             e.sharding.empty() ? "" : ", sharding " + e.sharding);
    std::cout << fmt::format(
        "  latency {:.1f} ns (simulated), roofline {:.1f} ns, {:.1f}% of roofline, heuristic "
        "{:.1f} ns\n",
        e.latency_ns, e.roofline_ns, e.roofline_pct, e.heuristic_ns);
    std::cout << fmt::format("  candidate {} (variant {}, choice {}): {}\n", e.index, e.variant,
                             e.choice, e.config);
    std::cout << fmt::format("  from {} (job {}, tilesweep {})\n", e.archive, e.job_name,
                             e.tool_version);
    if (!a.exact) {
      // The entry's kernel is built for its own shape (sizes, trip counts, its asserts): never
      // hand it out for another; re-lower its configuration at the asked shape instead.
      std::cout << fmt::format(
          "  note: {} was not swept; the entry's NKI kernel is built for {} only.\n", o->shape,
          e.shape);
      if (!o->nki) {
        std::cout
            << "  --nki re-lowers its configuration at the asked shape (or says why it cannot)\n";
        return 0;
      }
      auto r = reinstantiate(e, dims, lower::parse_nki_api(o->nki_api), o->nki_shapes == "generic");
      if (r.source.empty()) {
        std::cout << fmt::format(
            "  cannot re-instantiate the entry's configuration at {}: {}. Build one for this "
            "shape: tilesweep score KERNEL_FILE --kernel {} --target {} --shape {} --emit-nki "
            "DIR\n",
            o->shape, r.error, o->kernel, o->target, o->shape);
        return 0;
      }
      if (!r.note.empty()) {
        std::cout << fmt::format("  at {}: {}: {:.1f} ns\n\n{}", o->shape, r.note, r.latency_ns,
                                 r.source);
        return 0;
      }
      std::cout << fmt::format(
          "  re-instantiated at {}: the entry's configuration (variant, lowerings, engines, "
          "tiles), "
          "re-checked for capacity; simulated latency {:.1f} ns\n\n{}",
          o->shape, r.latency_ns, r.source);
      return 0;
    }
    if (!e.nki_error.empty()) std::cout << "  no NKI source: " << e.nki_error << "\n";
    if (o->nki && !e.nki.empty()) std::cout << "\n" << e.nki;
    return 0;
  };
}

}  // namespace ts::cli

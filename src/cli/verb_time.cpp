// `tilesweep time FILE.py [--kernel NAME] --target T --arg NAME=DTYPE[D0,..] ... [--json]`: imports
// an NKI kernel (either dialect) into the simulator's program form and simulates it on one
// NeuronCore: latency, per-engine busy time, HBM bytes, spills, on-chip peaks, instructions.
#include <cmath>
#include <iostream>

#include "tilesweep/base/error.h"
#include "tilesweep/base/json_string.h"
#include "tilesweep/base/source.h"
#include "tilesweep/nki_import/importer.h"
#include "tilesweep/sim/simulate.h"
#include "verbs.h"

namespace ts::cli {

namespace {

struct TimeOpts {
  std::string file, kernel, target = "trn1";
  std::vector<std::string> args;
  bool json = false;
  int trace = 0;
};

std::string integer(double v) { return fmt::format("{:.0f}", v); }

void print_json(const TimeOpts& o, const lower::Program& p, const sim::SimResult& r) {
  const auto& b = r.busy_ns;
  std::cout << fmt::format(
      "{{\"kernel\": {}, \"file\": {}, \"target\": {}, \"latency_ns\": {:.1f}, \"hbm_read_bytes\": "
      "{}, "
      "\"hbm_write_bytes\": {}, \"spill_bytes\": {}, \"busy_ns\": {{\"tensor\": {:.1f}, "
      "\"vector\": {:.1f}, "
      "\"scalar\": {:.1f}, \"gpsimd\": {:.1f}, \"dma\": {:.1f}}}, \"sbuf_peak_bytes\": {}, "
      "\"psum_peak_bytes\": {}, "
      "\"instructions\": {}}}\n",
      json_string(p.kernel), json_string(o.file), json_string(o.target), r.latency_ns,
      integer(r.hbm_read_bytes), integer(r.hbm_write_bytes), integer(r.spill_bytes), b[0], b[1],
      b[2], b[3], b[4], r.sbuf_peak_bytes, r.psum_peak_bytes, integer(r.instructions));
}

void print_text(const TimeOpts& o, const lower::Program& p, const sim::SimResult& r) {
  auto pct = [&](double ns) { return r.latency_ns > 0 ? 100 * ns / r.latency_ns : 0.0; };
  std::cout << fmt::format("kernel {} ({}) on {}\n", p.kernel, o.file, o.target);
  std::cout << fmt::format("  latency          {:.3f} us\n", r.latency_ns / 1e3);
  static const char* names[] = {"tensor", "vector", "scalar", "gpsimd", "dma"};
  for (int e = 0; e < 5; ++e)
    std::cout << fmt::format("  busy {:<7}     {:.3f} us ({:.1f} %)\n", names[e],
                             r.busy_ns[e] / 1e3, pct(r.busy_ns[e]));
  std::cout << fmt::format("  HBM read         {} bytes\n", integer(r.hbm_read_bytes));
  std::cout << fmt::format("  HBM written      {} bytes\n", integer(r.hbm_write_bytes));
  std::cout << fmt::format("  spilled          {} bytes\n", integer(r.spill_bytes));
  std::cout << fmt::format("  SBUF peak        {} bytes per partition\n", r.sbuf_peak_bytes);
  std::cout << fmt::format("  PSUM peak        {} bytes per partition\n", r.psum_peak_bytes);
  std::cout << fmt::format("  instructions     {}\n", integer(r.instructions));
}

// The first `n` simulated instructions, one a line: start, end, engine, the kernel's line:col.
void print_trace(const lower::Program& p, const sim::SimResult& r, int n) {
  for (int i = 0; i < n && i < static_cast<int>(r.trace.size()); ++i) {
    const sim::TraceEvent& e = r.trace[static_cast<std::size_t>(i)];
    const lower::Inst& in = p.insts[static_cast<std::size_t>(e.inst)];
    std::cout << fmt::format("  {:>12.1f} {:>12.1f} ns  {:<7} {:<14} {}\n", e.start_ns, e.end_ns,
                             sem::engine_name(e.engine), in.spec->op.name, in.note);
  }
}

}  // namespace

VerbRun add_time(CLI::App& app) {
  auto* cmd = app.add_subcommand("time", "simulate an NKI kernel (Python source) on a target");
  auto o = std::make_shared<TimeOpts>();
  cmd->add_option("file", o->file, "NKI kernel file (.py)")->required();
  cmd->add_option("-k,--kernel", o->kernel,
                  "kernel function (optional when the file has one @nki.jit function)");
  cmd->add_option("-t,--target", o->target, "target: trn1, trn2, trn3");
  cmd->add_option("--arg", o->args,
                  "NAME=DTYPE[D0,D1,...] for a tensor parameter, NAME=VALUE for a scalar")
      ->allow_extra_args(false);
  cmd->add_flag("--json", o->json, "print one JSON object for scripts");
  cmd->add_option("--trace", o->trace,
                  "also print the first N simulated instructions (start, end, engine, line:col)");
  return [o, cmd]() {
    if (!*cmd) return -1;
    std::vector<nki::KernelArg> args;
    for (const auto& a : o->args) args.push_back(nki::parse_kernel_arg(a));
    const target::Target& t = target::builtin_target(o->target);
    std::string source = read_text_file(o->file);
    nki::ImportedKernel k = nki::import_kernel(source, o->file, o->kernel, args, t);
    sim::SimOptions so;
    so.trace = o->trace > 0;
    sim::SimResult r = sim::simulate(k.program, t, so);
    if (!r.feasible)
      throw UserError(fmt::format("{}: kernel '{}' cannot run on {}: {}", o->file, k.program.kernel,
                                  o->target, r.reason));
    if (o->json)
      print_json(*o, k.program, r);
    else
      print_text(*o, k.program, r);
    if (!o->json && o->trace > 0) print_trace(k.program, r, o->trace);
    return 0;
  };
}

}  // namespace ts::cli

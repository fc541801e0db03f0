// `tilesweep score FILE --kernel K --target T --shape .. [--mesh 2x2] [--top N] [--json]`:
// searches one (kernel, shape) on this machine with all cores and prints the best candidates
// with simulated latency, roofline bound, % of roofline, per-engine busy time and the baselines.
#include <tbb/global_control.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>

#include "kernel_options.h"
#include "tilesweep/base/durable_file.h"
#include "tilesweep/base/error.h"
#include "tilesweep/base/json_string.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/nki.h"
#include "tilesweep/lower/nki_shapes.h"
#include "tilesweep/mesh/mesh_shape.h"
#include "tilesweep/sweep/mesh_setting.h"
#include "tilesweep/sweep/prepare.h"
#include "tilesweep/sweep/score.h"
#include "verbs.h"

namespace ts::cli {

namespace {

struct ScoreOpts {
  KernelOptions kernel;
  std::string mesh = "1", cache, nki_dir, nki_api = "current", nki_shapes = "generic";
  int top = 5, threads = 0, max_variants = 16, max_block = 8, max_lowerings = 3;
  bool json = false, engines_per_op = false, no_in_place = false, no_prune = false,
       no_pipeline = false, no_onchip_steps = false, no_psum_operands = false;
};

// One searched configuration: a sharding (or none) and its best candidates. Latencies on the
// mesh: setting.latency of the simulated local ones.
struct Outcome {
  sweep::MeshSetting setting;
  sweep::RangeResult range;
  double heuristic_ns = NAN, best_ns = INFINITY;
  std::vector<std::string> configs;  // per top entry
  std::vector<int> cores;            // per top entry: the NeuronCores it is split over
  std::vector<std::string>
      nki;  // per top entry with --emit-nki: the source, or "" (nki_error says why)
  std::vector<std::string> nki_error;
  // Each variant and fusion form that has no candidate, and why (lower's "no program" lines).
  std::vector<std::string> no_program;

  std::string sharding() const { return setting.sharding.empty() ? "none" : setting.sharding; }
  // A local latency (a baseline, infinite when none) on the mesh.
  double mesh_ns(double local_ns) const {
    return std::isfinite(local_ns) ? setting.latency(local_ns) : local_ns;
  }
};

std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{:.3f}", v) : "null"; }
// Byte counts and other whole quantities: integers, never "1024.000".
std::string json_integer(double v) { return std::isfinite(v) ? fmt::format("{:.0f}", v) : "null"; }

// What was searched, so a saved result names its own question: kernel, file, target, dims, mesh.
std::string json_subject(const ir::Kernel& k, const ScoreOpts& o, const sem::DimEnv& dims) {
  std::string shape;
  for (const auto& [name, value] : dims)
    shape += fmt::format("{}{}: {}", shape.empty() ? "" : ", ", json_string(name), value);
  return fmt::format(
      "\"kernel\": {}, \"file\": {}, \"target\": {}, \"shape\": {{{}}}, \"mesh\": {}, "
      "\"cores\": {}, ",
      json_string(k.name), json_string(o.kernel.file), json_string(o.kernel.target), shape,
      json_string(o.mesh), o.kernel.cores);
}

// The NKI source of each top candidate (--emit-nki), generic in the shape as `lower` makes it
// (--nki-shapes generic; a mesh's per-device kernel stays at its local shape).
void emit_top(Outcome& out, const lower::CandidateSpace& space, const ir::Kernel& k,
              const ScoreOpts& o, const std::vector<lower::ProbeSpace>& probes) {
  lower::NkiApi api = lower::parse_nki_api(o.nki_api);
  std::vector<std::string> names;
  for (const auto& param : k.params) names.push_back(param.name);
  bool generic = o.nki_shapes == "generic" && out.setting.sharding.empty();
  for (const auto& c : out.range.top) {
    lower::Program p = space.materialize(c.index).value();
    p.config = space.describe(c.index);
    try {
      std::optional<lower::NkiShapes> shapes;
      if (generic)
        shapes =
            lower::generic_form(space, space.decode(c.index), p, out.setting.local, probes, names);
      out.nki.push_back(lower::emit_nki(p, lower::nki_params(k), api, shapes ? &*shapes : nullptr));
      out.nki_error.emplace_back();
    } catch (const UserError& e) {
      out.nki.emplace_back();
      out.nki_error.push_back(e.what());
    }
  }
}

// Writes the emitted top candidates as DIR/KERNEL_TARGET_rankN.py; the paths (or why not) to `log`.
void write_top(const Outcome& r, const ir::Kernel& k, const ScoreOpts& o, std::ostream& log) {
  std::error_code ec;
  std::filesystem::create_directories(o.nki_dir, ec);
  if (ec)
    throw UserError(
        fmt::format("error: --emit-nki: cannot create folder '{}': {}", o.nki_dir, ec.message()));
  for (std::size_t i = 0; i < r.nki.size(); ++i) {
    if (r.nki[i].empty()) {
      log << fmt::format("NKI of rank {} (candidate {}) not written: {}\n", i + 1,
                         r.range.top[i].index, r.nki_error[i]);
      continue;
    }
    std::string path = fmt::format("{}/{}_{}_rank{}.py", o.nki_dir, k.name, o.kernel.target, i + 1);
    std::string head = r.setting.sharding.empty()
                           ? ""
                           : fmt::format(
                                 "# The per-device kernel of sharding {} on mesh {}; the "
                                 "collectives are not part of it.\n",
                                 r.setting.sharding, o.mesh);
    write_file_durably(path, head + r.nki[i], "--emit-nki file");
    log << fmt::format("NKI ({} API) of rank {} (candidate {}): {}\n", o.nki_api, i + 1,
                       r.range.top[i].index, path);
  }
}

// Searches the local shape of `setting`.
Outcome search(const sweep::PreparedKernel& pk, const target::Target& t, sweep::MeshSetting setting,
               const ScoreOpts& o, const ir::Kernel& k) {
  lower::SpaceOptions so;
  so.max_block = o.max_block;
  so.max_lowerings = o.max_lowerings;
  so.engines_per_op = o.engines_per_op;
  so.in_place = !o.no_in_place;
  so.pipeline = !o.no_pipeline;
  so.onchip_steps = !o.no_onchip_steps;
  so.psum_operands = !o.no_psum_operands;
  so.cores = o.kernel.cores;
  lower::CandidateSpace space(pk.space_variants(), t, setting.local, so);
  Outcome out;
  out.setting = std::move(setting);
  // Pruned (sweep/prune.h): the printed top and baselines are those of a full search.
  sweep::SpaceSample all(space.sections(), 0, 0);
  sweep::Pruner pruner;
  if (!o.no_prune) {
    sweep::PruneOptions po;
    po.keep = o.top;
    sweep::PruneBounds b = sweep::prune_bounds(space, all, t, po);
    if (out.setting.collectives.empty())
      pruner = sweep::Pruner(b, {});
    else
      pruner = sweep::Pruner(b, [setting = out.setting](double ns) { return setting.latency(ns); });
  }
  out.range = sweep::score_range(space, all, 0, space.size(), t, static_cast<std::size_t>(o.top),
                                 nullptr, &pruner);
  out.no_program = space.counts().unsupported;
  if (auto h = space.heuristic()) {
    auto s = sweep::score_program(*h, t);
    if (s.feasible) out.heuristic_ns = out.setting.latency(s.sim.latency_ns);
  }
  for (const auto& c : out.range.top) {
    out.configs.push_back(space.describe(c.index));
    out.cores.push_back(space.decode(c.index).cores);
  }
  if (!out.range.top.empty())
    out.best_ns = out.setting.latency(out.range.top.front().sim.latency_ns);
  if (!o.nki_dir.empty()) {
    std::vector<lower::ProbeSpace> probes;
    if (o.nki_shapes == "generic" && out.setting.sharding.empty() && !out.range.top.empty())
      probes = lower::probe_spaces(pk.space_variants(), t, out.setting.local, so);
    emit_top(out, space, k, o, probes);
  }
  return out;
}

void print_text(const Outcome& r, std::int64_t scored, std::int64_t infeasible, std::int64_t pruned,
                double seconds) {
  const sim::Roofline& roof = r.setting.roofline;
  std::cout << fmt::format(
      "roofline bound {:.2f} us (memory {:.2f}, matmul {:.2f}, other {:.2f}); sharding {}\n",
      roof.bound_ns / 1e3, roof.memory_ns / 1e3, roof.matmul_ns / 1e3, roof.other_ns / 1e3,
      r.sharding());
  std::cout << fmt::format(
      "attainable bound {:.2f} us (memory {:.2f}, matmul {:.2f}, other {:.2f})\n",
      roof.attainable_ns / 1e3, roof.attainable_memory_ns / 1e3, roof.attainable_matmul_ns / 1e3,
      roof.attainable_other_ns / 1e3);
  std::cout << fmt::format("{} candidates scored, {} infeasible, {} pruned, {:.2f} s\n", scored,
                           infeasible, pruned, seconds);
  std::set<std::string> said;  // variants often share one reason: each once, the variant dropped
  for (const auto& why : r.range.top.empty() ? r.no_program : std::vector<std::string>{}) {
    auto colon = why.find(": ");
    std::string reason = colon == std::string::npos ? why : why.substr(colon + 2);
    if (said.insert(reason).second) std::cout << "no program: " << reason << "\n";
  }
  // A baseline whose candidate has no program (or none feasible) prints as "none", not nan / inf.
  auto us = [](double ns) {
    return std::isfinite(ns) ? fmt::format("{:.2f} us", ns / 1e3) : std::string("none");
  };
  std::cout << fmt::format("baselines: heuristic {}, no-algebra {}, no-fusion {}\n",
                           us(r.heuristic_ns), us(r.mesh_ns(r.range.no_algebra_ns)),
                           us(r.mesh_ns(r.range.no_fusion_ns)));
  std::cout << "rank  index      latency_us  %roofline  %attainable  tensor_us vector_us scalar_us "
               "gpsimd_us dma_us  config\n";
  for (std::size_t i = 0; i < r.range.top.size(); ++i) {
    const auto& c = r.range.top[i];
    const auto& b = c.sim.busy_ns;
    double lat = r.setting.latency(c.sim.latency_ns);
    std::cout << fmt::format(
        "{:<5} {:<10} {:>10.2f} {:>9.1f}% {:>11.1f}% {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>7.2f}  "
        "{}\n",
        i + 1, c.index, lat / 1e3, 100 * roof.bound_ns / lat, 100 * roof.attainable_ns / lat,
        b[0] / 1e3, b[1] / 1e3, b[2] / 1e3, b[3] / 1e3, b[4] / 1e3, r.configs[i]);
  }
}

void print_json(const std::string& subject, const Outcome& r, std::int64_t scored,
                std::int64_t infeasible, std::int64_t pruned, double seconds) {
  const sim::Roofline& roof = r.setting.roofline;
  std::string top, no_program;
  for (const auto& why : r.no_program)
    no_program += (no_program.empty() ? "" : ", ") + json_string(why);
  for (std::size_t i = 0; i < r.range.top.size(); ++i) {
    const auto& c = r.range.top[i];
    const auto& b = c.sim.busy_ns;
    const double lat = r.setting.latency(c.sim.latency_ns);
    top += fmt::format(
        "{}{{\"index\": {}, \"latency_ns\": {}, \"percent_of_roofline\": {}, "
        "\"percent_of_attainable\": {}, \"busy_ns\": {{\"tensor\": {}, \"vector\": {}, "
        "\"scalar\": {}, \"gpsimd\": {}, \"dma\": {}}}, \"hbm_read_bytes\": {}, "
        "\"hbm_write_bytes\": {}, \"sbuf_peak_bytes\": {}, "
        "\"psum_peak_bytes\": {}, \"spill_bytes\": {}, \"collective_ns\": {}, \"cores\": {}, "
        "\"config\": {}}}",
        i ? ", " : "", c.index, json_number(lat), json_number(100 * roof.bound_ns / lat),
        json_number(100 * roof.attainable_ns / lat), json_number(b[0]), json_number(b[1]),
        json_number(b[2]), json_number(b[3]), json_number(b[4]), json_integer(c.sim.hbm_read_bytes),
        json_integer(c.sim.hbm_write_bytes), c.sim.sbuf_peak_bytes, c.sim.psum_peak_bytes,
        json_integer(c.sim.spill_bytes), json_number(r.setting.collective_ns), r.cores[i],
        json_string(r.configs[i]));
  }
  std::cout << fmt::format(
      "{{{}\"best_ns\": {}, \"roofline_ns\": {}, \"attainable_ns\": {}, \"sharding\": {}, "
      "\"baselines\": {{\"heuristic_ns\": {}, \"no_algebra_ns\": {}, "
      "\"no_fusion_ns\": {}}}, \"candidates_scored\": {}, \"infeasible\": {}, \"pruned\": {}, "
      "\"seconds\": {:.3f}, "
      "\"simulated\": true, \"no_program\": [{}], \"top\": [{}]}}\n",
      subject, json_number(r.best_ns), json_number(roof.bound_ns), json_number(roof.attainable_ns),
      json_string(r.sharding()), json_number(r.heuristic_ns),
      json_number(r.mesh_ns(r.range.no_algebra_ns)), json_number(r.mesh_ns(r.range.no_fusion_ns)),
      scored, infeasible, pruned, seconds, no_program, top);
}

}  // namespace

VerbRun add_score(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "score",
      "search one kernel at one shape on this machine and print the best simulated candidates");
  auto o = std::make_shared<ScoreOpts>();
  o->kernel.add_file(cmd);
  o->kernel.add_kernel(cmd);
  o->kernel.add_target(cmd);
  o->kernel.add_shape(cmd);
  cmd->add_option("--mesh", o->mesh,
                  "device mesh, e.g. 4 or 2x2: also search the sharding of the kernel over it");
  cmd->add_option("--top", o->top, "candidates to print")->check(CLI::PositiveNumber);
  cmd->add_option("--threads", o->threads, "worker threads (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-variants", o->max_variants, "algebraic variants kept")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-block", o->max_block, "row tiles per strip, up to")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-lowerings", o->max_lowerings, "instruction sequences kept per op")
      ->check(CLI::PositiveNumber);
  cmd->add_flag(
      "--engines-per-op", o->engines_per_op,
      "choose the engine per op (where its instructions have two), not one policy for all");
  cmd->add_flag("--no-in-place", o->no_in_place,
                "do not offer in-place element-wise writes (`inplace` candidates), to compare");
  cmd->add_flag("--no-pipeline", o->no_pipeline,
                "do not offer software-pipelined loops (`pipe` candidates), to compare");
  cmd->add_flag("--no-onchip-steps", o->no_onchip_steps,
                "do not offer stepped slices loaded contiguously and read through strided "
                "windows (`steps` candidates), to compare");
  cmd->add_flag("--no-psum-operands", o->no_psum_operands,
                "do not offer operands in PSUM: rows broadcast across partitions on the PE, "
                "batch-reduction partials, values read by Vector with an SBUF operand and loads "
                "copied there (`pe-broadcast`, `psum-partials`, `psum-values`, `psum-loads` "
                "candidates), to compare");
  o->kernel.add_cores(cmd);
  cmd->add_option("--cache", o->cache, "proof cache file, read and updated");
  cmd->add_flag("--json", o->json, "print one JSON object for scripts");
  cmd->add_flag("--no-prune", o->no_prune,
                "simulate every candidate to the end (default: skip those provably slower than "
                "the printed top and the baselines; the same results)");
  cmd->add_option("--emit-nki", o->nki_dir,
                  "write the NKI source of the printed (--top) candidates to this folder");
  cmd->add_option("--nki-api", o->nki_api,
                  "NKI dialect: current (nki, Neuron SDK 2.27+) or legacy (neuronxcc.nki, <= 2.26)")
      ->check(CLI::IsMember({"current", "legacy"}));
  cmd->add_option("--nki-shapes", o->nki_shapes,
                  "generic (default): as `lower --nki-shapes generic` (trip counts from the "
                  "arguments' shapes, partial last tiles where safe); fixed: asserted to --shape")
      ->check(CLI::IsMember({"generic", "fixed"}));
  o->kernel.add_ops(cmd);
  return [o, cmd]() {
    if (!*cmd) return -1;
    auto t0 = std::chrono::steady_clock::now();
    std::optional<tbb::global_control> limit;
    if (o->threads > 0)
      limit.emplace(tbb::global_control::max_allowed_parallelism,
                    static_cast<std::size_t>(o->threads));
    LoadedKernel loaded(o->kernel);
    const ir::Kernel& k = loaded.kernel();
    const target::Target& t = target::builtin_target(o->kernel.target);
    check_cores(o->kernel, t);
    sem::DimEnv dims = kernel_dims(o->kernel, k);
    mesh::MeshShape shape = mesh::parse_mesh_shape(o->mesh);
    verify::VerdictCache verdicts(o->cache);
    lower::SynthesisCache synth;
    sweep::PrepareOptions popts;
    popts.propagate.max_variants = o->max_variants;
    sweep::PreparedKernel pk = sweep::prepare_kernel(k, t.isa, synth, popts, &verdicts);
    verdicts.save();
    // Each setting (one device, or each sharding on the mesh): search the local shape, add the
    // collectives (alpha-beta on the target's topology). The first best wins ties.
    std::optional<Outcome> best;
    std::int64_t scored = 0, infeasible = 0, pruned = 0;
    for (sweep::MeshSetting& setting : sweep::mesh_settings(
             k, dims, t, shape, std::nullopt, o->kernel.cores, pk.variant_kernels())) {
      Outcome r = search(pk, t, std::move(setting), *o, k);
      scored += r.range.scored, infeasible += r.range.infeasible, pruned += r.range.pruned;
      if (!best || r.best_ns < best->best_ns) best = std::move(r);
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (o->json)
      print_json(json_subject(k, *o, dims), *best, scored, infeasible, pruned, seconds);
    else {
      std::cout << fmt::format(
          "kernel {} on {} at {} (simulated latencies; target description {})\n", k.name, t.name,
          o->kernel.shape, t.name);
      print_text(*best, scored, infeasible, pruned, seconds);
    }
    if (!o->nki_dir.empty()) write_top(*best, k, *o, o->json ? std::cerr : std::cout);
    return best->range.top.empty() ? 1 : 0;
  };
}

}  // namespace ts::cli

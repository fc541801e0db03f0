// `tilesweep lower FILE --kernel K --target T --shape ..`: the candidate space of one kernel at
// one shape — counts per stage (variants x instruction choices x tile configs, feasible after
// capacity pruning), why any part has no program, sample candidates, NKI source.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>

#include "kernel_options.h"
#include "tilesweep/base/durable_file.h"
#include "tilesweep/base/error.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/nki.h"
#include "tilesweep/lower/nki_shapes.h"
#include "tilesweep/lower/program_printer.h"
#include "tilesweep/sweep/prepare.h"
#include "verbs.h"

namespace ts::cli {

namespace {

struct LowerOpts {
  KernelOptions kernel;
  std::string nki_dir, cache, nki_api = "current", nki_shapes = "generic";
  int show = 0, max_variants = 16, max_block = 8, max_lowerings = 3;
  unsigned seed = 1;
  std::vector<std::int64_t> index;
};

void print_choices(const sweep::PreparedKernel& pk) {
  const auto& kc = pk.choices.front();
  std::cout << "instruction choices of the original kernel (proved lowerings per op, cheapest kept "
               "first):\n";
  for (const auto& op : kc.ops) {
    if (!op.synthesis) {
      std::cout << fmt::format("  {}: none ({})\n", op.label, op.note);
      continue;
    }
    static const char* stops[] = {"exhausted", "candidate limit", "step limit", "time limit"};
    std::cout << fmt::format("  {}  [{}]: {} lowering(s); synthesis {} steps, {}\n", op.label,
                             op.tile, op.synthesis->lowerings.size(), op.synthesis->steps,
                             stops[static_cast<int>(op.synthesis->stop)]);
    for (std::size_t i = 0; i < op.synthesis->lowerings.size() && i < 4; ++i)
      std::cout << "      " << op.synthesis->lowerings[i].text << "\n";
  }
  std::cout << "instruction fusion (an element-wise op and its reduction read the tile in one "
               "proved instruction; every variant):\n";
  std::set<std::string> pairs;
  for (std::size_t v = 0; v < pk.choices.size(); ++v)
    for (const auto& pc : pk.choices[v].pairs)
      if (pairs.insert(pc.label + pc.synthesis->lowerings.front().text).second)
        std::cout << fmt::format("  {} (variant {}): {}\n", pc.label, v,
                                 pc.synthesis->lowerings.front().text);
  if (pairs.empty()) std::cout << "  none found\n";
  std::cout << "second propagation round (a matmul's transposed left operand: the transpose moved "
               "up past element-wise\n"
               "instructions to the matmuls producing them, and fused there):\n";
  auto label = [&](int node) {
    const ir::Node& n = pk.variants.variants.front().kernel.nodes[node];
    return fmt::format("{}@{}", n.op, n.loc.line);
  };
  for (const auto& sc : kc.swaps) {
    std::vector<std::string> chain;
    double ms = 0;
    for (std::size_t i = 0; i < sc.site.chain.size(); ++i) {
      chain.push_back(label(sc.site.chain[i]));
      ms += sc.commutes[i].ms;
    }
    std::cout << fmt::format(
        "  {}: transpose moved past {} (each proved to commute with transpose, {:.1f} ms)\n",
        sc.label, chain.empty() ? "nothing" : fmt::format("{}", fmt::join(chain, ", ")), ms);
    for (const auto& f : sc.fusions) std::cout << "    instruction fusion: " << f << "\n";
    for (const auto& fp : sc.producers)
      std::cout << fmt::format("    {} computed transposed: {}\n", label(fp->node),
                               fp->fused.lowerings.front().text);
    std::cout << fmt::format("    {} reads it as it is: {}\n", label(sc.site.consumer),
                             sc.use->lowerings.front().text);
  }
  if (kc.swaps.empty()) std::cout << "  none found\n";
}

}  // namespace

VerbRun add_lower(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "lower", "count and show the candidate programs of a kernel at one shape on one target");
  auto o = std::make_shared<LowerOpts>();
  o->kernel.add_file(cmd);
  o->kernel.add_kernel(cmd);
  o->kernel.add_target(cmd);
  o->kernel.add_shape(cmd);
  cmd->add_option("--show", o->show,
                  "print this many candidates (the first, the last, and random ones by --seed)");
  cmd->add_option("--index", o->index, "print these candidates (by index)");
  cmd->add_option("--seed", o->seed, "seed for the sampled candidates");
  cmd->add_option(
      "--emit-nki", o->nki_dir,
      "write the NKI source of the shown candidates to this folder (without --show / --index: the "
      "heuristic candidate)");
  cmd->add_option("--nki-api", o->nki_api,
                  "NKI dialect: current (nki, Neuron SDK 2.27+) or legacy (neuronxcc.nki, <= 2.26)")
      ->check(CLI::IsMember({"current", "legacy"}));
  cmd->add_option("--nki-shapes", o->nki_shapes,
                  "generic (default): trip counts and HBM sizes from the arguments' shapes in "
                  "every dim where the "
                  "configuration allows (divisibility asserted); fixed: asserted to the --shape")
      ->check(CLI::IsMember({"generic", "fixed"}));
  cmd->add_option("--max-variants", o->max_variants, "algebraic variants kept")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-block", o->max_block, "row tiles per strip, up to")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-lowerings", o->max_lowerings, "instruction sequences kept per op")
      ->check(CLI::PositiveNumber);
  o->kernel.add_cores(cmd);
  cmd->add_option("--cache", o->cache, "proof cache file, read and updated");
  o->kernel.add_ops(cmd);
  return [o, cmd]() {
    if (!*cmd) return -1;
    LoadedKernel loaded(o->kernel);
    const ir::Kernel& k = loaded.kernel();
    const target::Target& t = target::builtin_target(o->kernel.target);
    check_cores(o->kernel, t);
    sem::DimEnv dims = kernel_dims(o->kernel, k);
    verify::VerdictCache verdicts(o->cache);
    lower::SynthesisCache synth;
    sweep::PrepareOptions popts;
    popts.propagate.max_variants = o->max_variants;
    sweep::PreparedKernel pk = sweep::prepare_kernel(k, t.isa, synth, popts, &verdicts);
    verdicts.save();
    lower::SpaceOptions sopts;
    sopts.max_block = o->max_block;
    sopts.max_lowerings = o->max_lowerings;
    sopts.cores = o->kernel.cores;
    lower::CandidateSpace space(pk.space_variants(), t, dims, sopts);
    const auto& c = space.counts();
    std::cout << fmt::format("kernel {} on {} at {}\n", k.name, t.name, o->kernel.shape);
    std::cout << fmt::format("  variants: {} proved ({:.0f} ms), {} with a lowering for every op\n",
                             c.variants, pk.propagate_ms, c.lowered_variants);
    std::cout << fmt::format(
        "  instruction choices: {:.0f} (lowering x engine combinations, summed over variant x "
        "fusion forms; synthesis {:.0f} ms, {} tile ops)\n",
        c.instruction_choices, pk.synthesis_ms, synth.size());
    std::cout << fmt::format("  tile configs: {:.0f} before capacity pruning\n", c.tile_configs);
    std::cout << fmt::format("  candidates: {} feasible after capacity pruning\n", c.candidates);
    for (const auto& s : space.sections())
      std::cout << fmt::format("    variant {} {}: {} candidates [{}, {})\n", s.variant,
                               s.swapped ? "fused transposed"
                               : s.fused ? "fused"
                                         : "unfused",
                               s.size, s.first, s.first + s.size);
    for (const auto& u : c.unsupported) std::cout << "  no program: " << u << "\n";
    print_choices(pk);
    std::vector<std::int64_t> pick = o->index;
    for (auto i : pick)
      if (i < 0 || i >= space.size())
        throw UserError(fmt::format("error: --index: candidate {} does not exist (there are {})", i,
                                    space.size()));
    std::mt19937_64 rng(o->seed);
    for (int i = 0; i < o->show && space.size() > 0; ++i)
      pick.push_back(
          i == 0   ? 0
          : i == 1 ? space.size() - 1
                   : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(space.size())));
    lower::NkiApi api = lower::parse_nki_api(o->nki_api);
    auto write_nki = [&](const lower::Program& p, const std::string& stem,
                         const lower::NkiShapes* shapes) {
      std::error_code ec;
      std::filesystem::create_directories(o->nki_dir, ec);
      if (ec)
        throw UserError(fmt::format("error: --emit-nki: cannot create folder '{}': {}", o->nki_dir,
                                    ec.message()));
      std::string path = fmt::format("{}/{}_{}.py", o->nki_dir, k.name, stem);
      try {
        write_file_durably(path, lower::emit_nki(p, lower::nki_params(k), api, shapes),
                           "--emit-nki file");
        std::cout << fmt::format(
            "  NKI ({} API{}): {}\n", o->nki_api,
            shapes ? fmt::format(", generic in: {}",
                                 shapes->generic.empty()
                                     ? "none"
                                     : fmt::format("{}", fmt::join(shapes->generic, ", ")))
                   : "",
            path);
      } catch (const UserError& e) {
        std::cout << fmt::format("  NKI not written for {}: {}\n", stem, e.what());
      }
    };
    // Generic kernels: each dim probed at twice its value (the spaces built once).
    std::vector<lower::ProbeSpace> probe_spaces;
    if (!o->nki_dir.empty() && o->nki_shapes == "generic" && !pick.empty())
      probe_spaces = lower::probe_spaces(pk.space_variants(), t, dims, sopts);
    for (auto i : pick) {
      lower::Lowered<lower::Program> lowered = space.materialize(i);
      if (!lowered) {  // e.g. a split over cores refused for this candidate's loops
        std::cout << fmt::format("\ncandidate {}: no program: {}\n  config: {}\n", i,
                                 lowered.no_program().reason, space.describe(i));
        continue;
      }
      lower::Program p = std::move(*lowered);
      p.config = space.describe(i);
      std::cout << fmt::format("\ncandidate {}:\n", i) << lower::print_program(p);
      if (o->nki_dir.empty()) continue;
      if (o->nki_shapes == "fixed") {
        write_nki(p, std::to_string(i), nullptr);
        continue;
      }
      std::vector<std::string> names;
      for (const auto& param : k.params) names.push_back(param.name);
      lower::NkiShapes shapes =
          lower::generic_form(space, space.decode(i), p, dims, probe_spaces, names);
      write_nki(p, std::to_string(i), &shapes);
    }
    // --emit-nki alone: the heuristic candidate (what a fixed-heuristic compiler builds).
    if (!o->nki_dir.empty() && pick.empty()) {
      auto h = space.heuristic();
      if (!h)
        throw UserError(fmt::format(
            "error: --emit-nki: kernel '{}' has no heuristic candidate at {} on {} (see 'no "
            "program' above); add --show N or --index I to write sampled candidates",
            k.name, o->kernel.shape, t.name));
      std::cout << "\nheuristic candidate (no --show / --index given):\n"
                << lower::print_program(*h);
      write_nki(*h, "heuristic", nullptr);
    }
    return 0;
  };
}

}  // namespace ts::cli

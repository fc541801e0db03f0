// End-to-end driver: the instruction-choice axis for every suite kernel (original variant) on
// a target. For each kernel: compute ops, ops with at least one proved lowering, the number of
// instruction-choice combinations, and synthesis time (tile-op syntheses are shared across
// kernels through one cache, as a sweep shares them). Usage: bench_lowering_table [trn1|trn2|trn3]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>

#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/instruction_choices.h"
#include "tilesweep/target/instr_cost.h"
#include "tilesweep/target/target.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  std::string target = argc > 1 ? argv[1] : "trn1";
  const auto& t = ts::target::builtin_target(target);
  ts::lower::SynthesisCache cache;
  ts::verify::VerdictCache verdicts;
  std::map<std::string, std::string> tile_ops;  // tile signature -> lowerings
  std::cout << fmt::format(
      "target {}\n\n| suite | kernel | compute ops | lowered | combinations | ms "
      "|\n|---|---|---|---|---|---|\n",
      target);
  double total_ms = 0;
  for (const char* suite : {"axon", "nkibench"}) {
    std::vector<fs::path> files;
    for (const auto& f :
         fs::directory_iterator(fs::path(TS_SOURCE_DIR) / "jobs" / "kernels" / suite))
      if (f.path().extension() == ".py") files.push_back(f.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      ts::ir::Module m = ts::ir::load_module(f.string(), ts::sem::OpTable::builtin());
      const auto& k = m.kernel(f.stem().string());
      auto start = std::chrono::steady_clock::now();
      ts::lower::KernelChoices c = ts::lower::instruction_choices(k, t.isa, cache, {}, &verdicts);
      double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      total_ms += ms;
      for (const auto& op : c.ops) {
        std::string text;
        if (!op.synthesis)
          text = "(" + op.note + ")";
        else if (op.synthesis->lowerings.empty())
          text = "NONE";
        else {
          // Cheapest first, by the isa.toml cost formulas at a nominal 128 x 512 tile.
          std::vector<std::pair<double, std::string>> ranked;
          for (const auto& l : op.synthesis->lowerings) {
            ts::sem::DimEnv env;
            for (const auto& d : l.program.dims) env[d] = d == "P" ? 128 : 512;
            ranked.emplace_back(ts::target::program_ns(t, l.program, env), l.text);
          }
          std::sort(ranked.begin(), ranked.end());
          for (std::size_t i = 0; i < ranked.size() && i < 4; ++i)
            text +=
                fmt::format("{}{} ({:.0f} ns)", i ? " | " : "", ranked[i].second, ranked[i].first);
        }
        if (op.synthesis && op.synthesis->lowerings.size() > 4)
          text += fmt::format(" | ... ({} in all)", op.synthesis->lowerings.size());
        tile_ops[op.tile.empty() ? op.label : op.tile] = text;
      }
      std::cout << fmt::format("| {} | {} | {} | {} | {:.0f} | {:.0f} |\n", suite, k.name,
                               c.ops.size(), static_cast<int>(c.ops.size()) - c.unlowered,
                               c.combinations, ms)
                << std::flush;
    }
  }
  std::cout << fmt::format("\n{} distinct tile ops, {} cache hits, {:.0f} ms in all\n\n",
                           cache.size(), cache.hits(), total_ms);
  for (const auto& [op, text] : tile_ops) std::cout << "- `" << op << "`: " << text << "\n";
  return 0;
}

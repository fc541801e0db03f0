// `tilesweep diff A.h5 B.h5 [--threshold PCT]`: per-shape changes of the best candidate and
// latency, regressions first, each with only the knobs that changed
// (include/tilesweep/report/merge.h). Exit 0 either way; "no differences" when none.
#include <fmt/format.h>

#include <iostream>

#include "tilesweep/report/merge.h"
#include "verbs.h"

namespace ts::cli {

VerbRun add_diff(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "diff",
      "per-shape changes of the best candidate and latency from A to B (regressions first)");
  auto a = std::make_shared<std::string>();
  auto b = std::make_shared<std::string>();
  cmd->add_option("a", *a, "the archive before")->required();
  cmd->add_option("b", *b, "the archive after")->required();
  auto threshold = std::make_shared<double>(0.1);
  cmd->add_option("--threshold", *threshold,
                  "latency changes of at most PCT percent are not regressions or improvements "
                  "(default 0.1; 0: any change)")
      ->option_text("PCT")
      ->check(CLI::Range(0.0, 1e6));
  return [=]() {
    if (!*cmd) return -1;
    store::Archive before = store::read_archive(*a);
    store::Archive after = store::read_archive(*b);
    auto changes = report::diff_best(before, after, *threshold);
    if (changes.empty()) {
      std::cout << "no differences\n";
      return 0;
    }
    for (const auto& c : changes) std::cout << report::describe(c) << "\n";
    std::cout << fmt::format("{} difference(s)\n", changes.size());
    return 0;
  };
}

}  // namespace ts::cli

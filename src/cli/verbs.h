// The verbs of the tilesweep command line. Each registers its subcommand and returns the exit
// code of its run through the callback it installs.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace ts::cli {

// A verb's run function, called after parsing; returns the process exit code.
using VerbRun = std::function<int()>;

VerbRun add_check(CLI::App& app);
VerbRun add_eval(CLI::App& app);
VerbRun add_prove(CLI::App& app);
VerbRun add_variants(CLI::App& app);
VerbRun add_lower(CLI::App& app);
VerbRun add_run(CLI::App& app);
VerbRun add_score(CLI::App& app);
VerbRun add_select(CLI::App& app);
VerbRun add_lookup(CLI::App& app);
VerbRun add_report(CLI::App& app);
VerbRun add_merge(CLI::App& app);
VerbRun add_diff(CLI::App& app);
VerbRun add_time(CLI::App& app);
VerbRun add_why(CLI::App& app);

}  // namespace ts::cli

// tilesweep: the command line. Exit codes: 0 success, 1 runtime failure, 2 bad input.
#include <CLI/CLI.hpp>
#include <iostream>

#include "tilesweep/base/error.h"
#include "verbs.h"

int main(int argc, char** argv) {
  CLI::App app{"tilesweep: a distributed superoptimizer for tile-based accelerator kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tilesweep ") + TILESWEEP_VERSION);
  std::vector<ts::cli::VerbRun> verbs = {
      ts::cli::add_check(app),    ts::cli::add_eval(app),   ts::cli::add_prove(app),
      ts::cli::add_variants(app), ts::cli::add_lower(app),  ts::cli::add_score(app),
      ts::cli::add_run(app),      ts::cli::add_select(app), ts::cli::add_lookup(app),
      ts::cli::add_report(app),   ts::cli::add_merge(app),  ts::cli::add_diff(app),
      ts::cli::add_time(app),     ts::cli::add_why(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    for (auto& run : verbs) {
      int code = run();
      if (code >= 0) return code;
    }
    return 2;
  } catch (const ts::UserError& e) {
    std::string what = e.what();
    if (what.rfind("error:", 0) != 0 && what.find(": error: ") == std::string::npos)
      what = "error: " + what;
    std::cerr << what << "\n";
    return 2;
  } catch (const ts::InternalError& e) {
    std::cerr << "tilesweep: " << e.what()
              << "\n(this is a bug in tilesweep; please report it with the input that caused it)\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory (try smaller shapes)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tilesweep: unexpected failure: " << e.what() << "\n";
    return 1;
  }
}

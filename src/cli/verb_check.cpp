// `tilesweep check FILE.py`: parse and validate a kernel file, print its kernels and graphs.
#include <iostream>

#include "args.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/ir/graph_printer.h"
#include "verbs.h"

namespace ts::cli {

VerbRun add_check(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "check",
      "parse and validate a kernel file; print its kernels, inferred shapes and op graphs");
  struct Opts {
    std::vector<std::string> files;
    std::vector<std::string> ops;
    bool quiet = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("files", o->files, "kernel files (.py)")->required();
  cmd->add_option("--ops", o->ops, "extra op semantics file (TOML, same format as ops.toml)");
  cmd->add_flag("-q,--quiet", o->quiet, "print only one summary line per file");
  return [o, cmd]() {
    if (!*cmd) return -1;
    sem::OpTable ops = load_ops(o->ops);
    for (const auto& f : o->files) {
      ir::Module m = ir::load_module(f, ops);
      if (o->quiet) {
        std::size_t nodes = 0;
        for (const auto& k : m.kernels) nodes += k.nodes.size();
        std::cout << fmt::format("{}: ok, {} kernel(s), {} nodes\n", f, m.kernels.size(), nodes);
        continue;
      }
      std::cout << "# " << f << "\n";
      for (const auto& k : m.kernels) std::cout << ir::print_kernel(k) << "\n";
    }
    return 0;
  };
}

}  // namespace ts::cli

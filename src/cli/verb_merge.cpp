// `tilesweep merge A.h5 B.h5 ... -o C.h5`: one archive from several, keeping provenance (rules:
// include/tilesweep/report/merge.h).
#include <fmt/format.h>

#include <iostream>

#include "tilesweep/base/error.h"
#include "tilesweep/report/merge.h"
#include "verbs.h"

namespace ts::cli {

VerbRun add_merge(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "merge", "combine archives into one, keeping which archive each row came from");
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("archives", *inputs, "archives to merge (plain or merged)")
      ->required()
      ->expected(2, -1);
  cmd->add_option("-o,--output", *out, "the merged archive to write")->required();
  return [=]() {
    if (!*cmd) return -1;
    std::vector<report::LoadedArchive> loaded;
    for (const auto& p : *inputs) loaded.push_back(report::load_archive(p));
    for (const auto& p : *inputs)
      if (p == *out)
        throw UserError(fmt::format("error: -o: '{}' is also an input; name a new file", p));
    report::Merged m = report::merge_archives(loaded, TILESWEEP_VERSION);
    store::write_archive(*out, m.archive, m.provenance);
    std::cout << fmt::format(
        "{}: {} /best rows, {} candidates, {} proofs, {} units from {} source archive(s)\n", *out,
        m.archive.best.size(), m.archive.candidates.size(), m.archive.proofs.size(),
        m.archive.progress.size(), m.provenance.sources.size());
    return 0;
  };
}

}  // namespace ts::cli

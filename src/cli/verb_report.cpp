// `tilesweep report ARCHIVE [--format text|csv|json]`: the archive as the Axon paper's tables
// plus % of roofline, proof and search statistics (include/tilesweep/report/report.h).
#include <iostream>

#include "tilesweep/report/report.h"
#include "verbs.h"

namespace ts::cli {

VerbRun add_report(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "report", "speedup, ablation, % of roofline, per-stage and search statistics of an archive");
  auto archive = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("text");
  cmd->add_option("archive", *archive, "archive (plain or merged)")->required();
  cmd->add_option("--format", *format,
                  "text, csv (table,row,column,value,kernel,target,shape,mesh) or json")
      ->check(CLI::IsMember({"text", "csv", "json"}));
  return [=]() {
    if (!*cmd) return -1;
    report::Report r = report::build_report(report::load_archive(*archive));
    if (*format == "csv")
      std::cout << report::format_csv(r);
    else if (*format == "json")
      std::cout << report::format_json(r);
    else
      std::cout << report::format_text(r);
    return 0;
  };
}

}  // namespace ts::cli

// `tilesweep why ARCHIVE [--kernel K] [--target T] [--shape S] [--mesh M] [--json]`: per (kernel,
// target, shape, mesh), what bounds the best candidate (engine busy times, collectives,
// partitions, HBM traffic, spilled bytes) and why a key has no program
// (include/tilesweep/report/why.h).
#include <fmt/format.h>

#include <iostream>

#include "tilesweep/base/json_string.h"
#include "tilesweep/report/why.h"
#include "verbs.h"

namespace ts::cli {

namespace {

std::string why_json(const std::vector<report::Why>& all) {
  std::string out = "[";
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& w = all[i];
    std::string details;
    for (std::size_t d = 0; d < w.details.size(); ++d)
      details += (d ? ", " : "") + json_string(w.details[d]);
    out += fmt::format(
        "{}\n  {{\"kernel\": {}, \"target\": {}, \"shape\": {}, \"mesh\": {}, \"bound\": {}, "
        "\"details\": [{}]}}",
        i ? "," : "", json_string(w.kernel), json_string(w.target), json_string(w.shape),
        json_string(w.mesh), json_string(w.bound), details);
  }
  return out + "\n]\n";
}

}  // namespace

VerbRun add_why(CLI::App& app) {
  auto* cmd = app.add_subcommand("why",
                                 "what bounds each best candidate of an archive (engines, "
                                 "partitions, spills) and why a key has no program");
  auto archive = std::make_shared<std::string>();
  auto filter = std::make_shared<report::WhyFilter>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("archive", *archive, "archive (plain or merged)")->required();
  cmd->add_option("--kernel", filter->kernel, "only this kernel (its label in the job)");
  cmd->add_option("--target", filter->target, "only this target");
  cmd->add_option("--shape", filter->shape,
                  "only this shape, as the archive writes it (M=256,N=512)");
  cmd->add_option("--mesh", filter->mesh, "only this mesh (1, 2x2, ...)");
  cmd->add_flag("--json", *json, "a JSON list: kernel, target, shape, mesh, bound, details");
  return [=]() {
    if (!*cmd) return -1;
    std::vector<report::Why> all = report::explain(report::load_archive(*archive), *filter);
    if (*json) {
      std::cout << why_json(all);
      return 0;
    }
    for (const auto& w : all) {
      std::cout << fmt::format("{} {} {} mesh {}: {}\n", w.kernel, w.target,
                               w.shape.empty() ? "-" : w.shape, w.mesh, w.bound);
      for (const auto& d : w.details) std::cout << "  " << d << "\n";
    }
    return 0;
  };
}

}  // namespace ts::cli

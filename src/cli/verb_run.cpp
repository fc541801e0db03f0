// `tilesweep run JOB.toml [--resume] [--archive PATH] [--dry-run [--exact]] [--quiet] [--threads
// N]`: the sweep, on one rank or under mpiexec. The work is in sweep/run.h; this only parses
// arguments.
#include <iostream>

#include "tilesweep/sweep/run.h"
#include "verbs.h"

#ifndef TILESWEEP_VERSION
#define TILESWEEP_VERSION "unknown"
#endif
#ifndef TILESWEEP_GIT_COMMIT
#define TILESWEEP_GIT_COMMIT ""
#endif

namespace ts::cli {

VerbRun add_run(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("run", "run a sweep job (MPI-aware: works alone or under mpiexec)");
  auto o = std::make_shared<sweep::RunOptions>();
  cmd->add_option("job", o->job_path, "job file (TOML)")->required();
  cmd->add_flag("--resume", o->resume,
                "continue the run recorded in the archive's journal, skipping its done units");
  cmd->add_option("--archive", o->archive,
                  "archive to write (default: the job's [output] archive)");
  auto* dry = cmd->add_flag("--dry-run", o->dry_run,
                            "print the spaces (kernel, target, shape, mesh, sharding) from the job "
                            "alone in about a second; "
                            "score nothing, write nothing (with --exact, or an earlier run's "
                            "<archive>.synthesis at hand: "
                            "the candidate counts and work units too)");
  cmd->add_flag("--exact", o->exact,
                "with --dry-run: count the candidates and work units (runs the prepare: proofs and "
                "ISA synthesis)")
      ->needs(dry);
  cmd->add_flag("-q,--quiet", o->quiet, "no progress lines on stderr");
  cmd->add_option("--threads", o->threads,
                  "threads per rank (default: this node's cores / its ranks)")
      ->check(CLI::PositiveNumber);
  return [o, cmd]() {
    if (!*cmd) return -1;
    o->tool_version = TILESWEEP_VERSION;
    o->git_commit = TILESWEEP_GIT_COMMIT;
    return sweep::run_sweep(*o, std::cout, std::cerr);
  };
}

}  // namespace ts::cli

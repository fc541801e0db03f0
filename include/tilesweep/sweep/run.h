// `tilesweep run`: a whole sweep, on one rank or many (MPI). Rank 0 reads and validates the job
// and broadcasts it (or the error, so every rank stops together); every rank builds the same
// plan; rank 0 schedules the units, journals each completed one (crash safety), and writes the
// HDF5 archive at the end — also after SIGINT/SIGTERM, with status "partial". See ARCHITECTURE
// §6 and results/README.md.
#pragma once

#include <iosfwd>
#include <string>

namespace ts::sweep {

struct RunOptions {
  std::string job_path;
  std::string archive;   // "" = the job's [output] archive
  bool resume = false;   // continue from the archive's journal
  bool dry_run = false;  // print the units, score nothing
  bool exact = false;    // a dry run counts candidates and units (runs the prepare); dry_run.h
  bool quiet = false;    // no progress lines
  int threads = 0;       // TBB threads per rank; 0 = this node's cores / its ranks
  std::string tool_version, git_commit;
};

// Runs the sweep; returns the exit code (0 done, 130/143 stopped by SIGINT/SIGTERM with a
// partial archive). Throws UserError on rank 0 for bad input (every rank stops; the other
// ranks return 2 silently). `out`: the summary (rank 0); `err`: progress and rank errors.
int run_sweep(const RunOptions& options, std::ostream& out, std::ostream& err);

}  // namespace ts::sweep

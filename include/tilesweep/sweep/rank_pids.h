// `<archive>.pids`: which processes run a sweep, so that a user can signal exactly their own run
// (`kill -INT $(cut -d' ' -f3 <archive>.pids)`) and not every `tilesweep run` of a shared node.
// One line per rank, in rank order: "<rank> <host> <pid>". Written by rank 0 once the journal is
// open (after the prepare) and removed when the run ends; a file left by a killed run names
// processes that are gone.
#pragma once

#include <string>
#include <vector>

namespace ts::sweep {

std::string pids_path(const std::string& archive);

// This process's line: "<rank> <host> <pid>\n".
std::string rank_pid_line(int rank);

struct RankPid {
  int rank = 0;
  std::string host;
  long pid = 0;
};

// The lines of rank_pid_line, concatenated (as Comm::allgather returns them).
std::vector<RankPid> parse_rank_pids(const std::string& text);

// What a user types to interrupt the run: "kill -INT <pid> <pid> ..." when every rank runs on
// `this_host`, else one "ssh <host> kill -INT <pids>" per host joined by "; ".
std::string interrupt_command(const std::vector<RankPid>& ranks, const std::string& this_host);

std::string host_name();

}  // namespace ts::sweep

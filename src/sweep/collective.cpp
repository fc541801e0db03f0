#include "tilesweep/sweep/collective.h"

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <ostream>

namespace ts::sweep {

JobError::JobError(int rank, const std::string& message)
    : std::runtime_error(message), rank_(rank) {}

std::string rank_error(int rank, std::string_view what) {
  if (what.rfind("error: ", 0) == 0) what.remove_prefix(7);
  return fmt::format("error on rank {}: {}", rank, what);
}

namespace {

// A failed rank's vote: "<rank> <length>\n<message>"; a rank that succeeded votes "".
std::string vote(int rank, const std::string& message) {
  return fmt::format("{} {}\n{}", rank, message.size(), message);
}

}  // namespace

void agree(const Comm& comm, const std::function<void()>& step) {
  if (comm.size() == 1) return step();
  std::string failure;
  bool failed = false;
  try {
    step();
  } catch (const std::exception& e) {
    failure = e.what(), failed = true;
  } catch (...) {
    failure = "unknown failure", failed = true;
  }
  std::string votes = comm.allgather(failed ? vote(comm.rank(), failure) : std::string());
  if (votes.empty()) return;
  int rank = 0;
  std::size_t length = 0, eol = votes.find('\n');
  if (eol == std::string::npos || std::sscanf(votes.c_str(), "%d %zu", &rank, &length) != 2)
    throw JobError(0, "the ranks' votes are unreadable");
  throw JobError(rank, votes.substr(eol + 1, length));
}

void abort_job(const Comm& comm, std::ostream& err, std::string_view what) {
  err << rank_error(comm.rank(), what) << std::endl;
  comm.abort(2);
}

}  // namespace ts::sweep

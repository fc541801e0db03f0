// Error handling where the ranks of a sweep can go different ways. Every error on any rank ends
// the whole job within seconds, with `error on rank N: ...` and exit code 2:
//  - agree(): a step some ranks do (rank 0 opening the journal) or all do (parsing the job),
//    then a vote, so a failure on any rank stops every rank at the same point: each throws
//    JobError naming the lowest failing rank and its message (run_sweep prints it on rank 0
//    and returns 2 on every rank; MPI finalizes normally).
//  - abort_job(): where the ranks cannot meet (one rank fails while the others wait for its
//    messages or sit in another collective), prints the error and ends every rank (MPI_Abort
//    with code 2).
// On one rank agree() runs the step alone and lets its exception through unchanged (the
// command line prints `error: ...` as for any other verb).
#pragma once

#include <functional>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <string_view>

#include "tilesweep/sweep/mpi_comm.h"

namespace ts::sweep {

// A failure every rank of the job knows about.
class JobError : public std::runtime_error {
 public:
  JobError(int rank, const std::string& message);
  int rank() const { return rank_; }

 private:
  int rank_;
};

// "error on rank N: what" (a leading "error: " of `what` dropped).
std::string rank_error(int rank, std::string_view what);

// Runs `step` here, then votes. Collective: every rank calls it at the same point, with its own
// step (a no-op where the rank has nothing to do). Throws JobError on every rank when the step
// threw on any rank (more than one: the lowest rank's message).
void agree(const Comm& comm, const std::function<void()>& step);

// Prints rank_error(comm.rank(), what) to `err` and ends every rank of the job with exit code 2.
[[noreturn]] void abort_job(const Comm& comm, std::ostream& err, std::string_view what);

}  // namespace ts::sweep

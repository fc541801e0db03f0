// SIGINT and SIGTERM during a sweep: the handler records the signal; the scheduler stops handing
// out units, and the units in flight stop between two candidates (score_range polls the flag),
// so the job ends within seconds with its completed units journaled. A worker that is signalled
// tells rank 0 (kTagInterrupt), which stops the whole job the same way.
#pragma once

#include <atomic>
#include <exception>

namespace ts::sweep {

// Installs the handlers (SIGINT, SIGTERM) for the rest of the process.
void install_interrupt_handlers();

// The signal that interrupted the run, 0 while none has.
int interrupt_signal();

// What the units poll: nonzero once interrupted.
const std::atomic<int>& interrupt_flag();

// Interrupts the run as if `signal` had arrived here (a worker's report on rank 0).
void request_interrupt(int signal);

// A unit that stopped before its end because of an interrupt: it has no result.
struct UnitInterrupted : std::exception {
  const char* what() const noexcept override { return "unit interrupted"; }
};

}  // namespace ts::sweep

// Progress of a sweep on rank 0: units done / total, candidates per second, ETA — one line at
// most once per second to the given stream (stderr), nothing when it is null (--quiet).
// Not thread-safe: rank 0's main thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>

namespace ts::sweep {

class Progress {
 public:
  // `done_units` were done before this run started (--resume) and do not count for the rate.
  Progress(std::ostream* out, std::int64_t total_units, std::int64_t done_units);

  void unit_done(std::int64_t candidates);
  void finish();  // one last line when anything was printed or the run took over a second

 private:
  void print();

  std::ostream* out_;
  std::int64_t total_, done_, resumed_, candidates_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
  bool printed_ = false;
};

}  // namespace ts::sweep

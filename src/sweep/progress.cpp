#include "tilesweep/sweep/progress.h"

#include <fmt/format.h>

#include <ostream>

namespace ts::sweep {

namespace {

std::string clock_text(double seconds) {
  auto s = static_cast<long long>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

Progress::Progress(std::ostream* out, std::int64_t total_units, std::int64_t done_units)
    : out_(out),
      total_(total_units),
      done_(done_units),
      resumed_(done_units),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void Progress::unit_done(std::int64_t candidates) {
  ++done_;
  candidates_ += candidates;
  auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::seconds(1)) return;
  last_ = now;
  print();
}

void Progress::finish() {
  if (printed_ || std::chrono::steady_clock::now() - start_ > std::chrono::seconds(1)) print();
}

void Progress::print() {
  if (!out_) return;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = elapsed > 0 ? candidates_ / elapsed : 0;
  std::int64_t fresh = done_ - resumed_;
  std::string eta =
      fresh > 0 && done_ < total_ ? clock_text(elapsed / fresh * (total_ - done_)) : "-";
  *out_ << fmt::format(
               "units {}/{} ({:.0f}%), {} candidates, {:.0f} candidates/s, elapsed {}, ETA {}\n",
               done_, total_, total_ ? 100.0 * done_ / total_ : 100.0, candidates_, rate,
               clock_text(elapsed), eta)
        << std::flush;
  printed_ = true;
}

}  // namespace ts::sweep

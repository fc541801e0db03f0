#include "tilesweep/sweep/scheduler.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <ostream>
#include <thread>

#include "tilesweep/sweep/collective.h"
#include "tilesweep/sweep/interrupt.h"
#include "tilesweep/sweep/unit_work.h"
#include "tilesweep/sweep/wire.h"

namespace ts::sweep {

namespace {

store::UnitResult score(const Plan& plan, std::size_t unit, int rank) {
  const WorkUnit& u = plan.units()[unit];
  if (u.id == injected_failure_unit())
    throw std::runtime_error(
        fmt::format("injected failure in unit {} (TILESWEEP_FAIL_UNIT)", u.id));
  return score_unit(plan.spaces()[u.space], u, plan.job().search.keep_top, rank, &interrupt_flag());
}

std::string encode_index(std::size_t i) {
  std::uint64_t v = i;
  return std::string(reinterpret_cast<const char*>(&v), sizeof v);
}

// Rank 0's shared state: the next unit to hand out, and what its own scoring thread finished.
class Queue {
 public:
  explicit Queue(const std::vector<std::size_t>& todo) : todo_(todo) {}
  std::optional<std::size_t> take() {
    std::lock_guard lock(mu_);
    if (stopping_ || next_ == todo_.size()) return std::nullopt;
    return todo_[next_++];
  }
  void stop() {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  void finish(store::UnitResult&& r) {
    std::lock_guard lock(mu_);
    finished_.push_back(std::move(r));
  }
  void fail(std::string what) {
    std::lock_guard lock(mu_);
    error_ = std::move(what);
  }
  void local_done() {
    std::lock_guard lock(mu_);
    local_running_ = false;
  }
  // Moves out what the local thread finished; false once it is done and nothing is left.
  bool drain(std::deque<store::UnitResult>& out, std::string& error) {
    std::lock_guard lock(mu_);
    out.swap(finished_);
    error = error_;
    return local_running_ || !out.empty();
  }

 private:
  std::mutex mu_;
  const std::vector<std::size_t>& todo_;
  std::size_t next_ = 0;
  bool stopping_ = false, local_running_ = true;
  std::deque<store::UnitResult> finished_;
  std::string error_;
};

// Rank 0's answer to one message: a unit (or stop) for a request, the result recorded; a worker
// that stopped counted off; a worker's interrupt taken as this rank's own.
void serve(const Comm& comm, Queue& queue, const Comm::Message& m, const MasterHooks& hooks,
           int& workers) {
  if (m.tag == kTagInterrupt) {
    request_interrupt(std::atoi(m.bytes.c_str()));
    return;
  }
  // The worker gets its next unit before the result is recorded.
  if (m.tag == kTagRequest) {
    auto u = queue.take();
    comm.send(m.source, kTagAssign, u ? encode_index(*u) : std::string());
  } else {
    --workers;  // kTagFinal: its last result, if any
  }
  if (!m.bytes.empty()) hooks.done(decode_unit(m.bytes));
}

}  // namespace

std::int64_t injected_failure_unit() {
  const char* v = std::getenv("TILESWEEP_FAIL_UNIT");
  return v && *v ? std::atoll(v) : -1;
}

void run_master(const Comm& comm, const Plan& plan, const std::vector<std::size_t>& todo,
                const MasterHooks& hooks, std::ostream& err) {
  Queue queue(todo);
  std::thread local([&] {
    try {
      while (auto u = queue.take()) queue.finish(score(plan, *u, 0));
    } catch (const UnitInterrupted&) {  // the loop below stops handing out units
    } catch (const std::exception& e) {
      queue.fail(e.what());
    }
    queue.local_done();
  });
  int workers = comm.size() - 1;
  bool local_running = true;
  std::deque<store::UnitResult> finished;
  std::string error;
  while (workers > 0 || local_running) {
    bool idle = true;
    try {
      while (auto m = comm.try_receive()) {
        idle = false;
        serve(comm, queue, *m, hooks, workers);
      }
      local_running = queue.drain(finished, error);
      if (!error.empty()) throw std::runtime_error(error);
      for (auto& r : finished) hooks.done(std::move(r)), idle = false;
      finished.clear();
      if (!idle) hooks.commit();
    } catch (const std::exception&
                 e) {  // a unit failed here, or recording failed (journal: disk full, ...)
      local.detach();
      abort_job(comm, err, e.what());
    }
    if (hooks.stop_requested()) queue.stop();
    if (idle) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  local.join();
}

// A worker's view of its requests: how many rank 0 has not answered yet, the units it was
// given and not yet started, and whether it was told to stop.
class Inbox {
 public:
  explicit Inbox(const Comm& comm) : comm_(comm) {}
  void request(std::string result) {
    comm_.post(0, kTagRequest, std::move(result));
    ++unanswered_;
  }
  // The next unit to score, waiting for an answer if none is at hand; nullopt once rank 0 said
  // stop and every request is answered.
  std::optional<std::uint64_t> next() {
    while (ready_.empty() && unanswered_ > 0) receive();
    if (ready_.empty()) return std::nullopt;
    std::uint64_t u = ready_.front();
    ready_.pop_front();
    return u;
  }
  // Whether a request sent now could still bring a unit or must be answered (false: the result
  // goes with the final message).
  bool expecting() const { return !stopped_ || unanswered_ > 0 || !ready_.empty(); }

 private:
  void receive() {
    Comm::Message m = comm_.receive();
    --unanswered_;
    if (m.bytes.empty()) {
      stopped_ = true;
      return;
    }
    std::uint64_t unit = 0;
    std::memcpy(&unit, m.bytes.data(), sizeof unit);
    ready_.push_back(unit);
  }
  const Comm& comm_;
  int unanswered_ = 0;
  std::deque<std::uint64_t> ready_;
  bool stopped_ = false;
};

void run_worker(const Comm& comm, const Plan& plan, std::ostream& err) {
  Inbox inbox(comm);
  for (int i = 0; i <= kUnitsAhead; ++i) inbox.request({});  // the unit to score, and those ahead
  std::string result;
  bool told = false;  // rank 0 knows this rank was interrupted
  while (auto unit = inbox.next()) {
    try {
      result = encode_unit(score(plan, *unit, comm.rank()));
    } catch (const UnitInterrupted&) {  // no result; rank 0 stops the job and then this rank
      if (!told) comm.post(0, kTagInterrupt, std::to_string(interrupt_signal()));
      told = true;
    } catch (const std::exception& e) {
      abort_job(comm, err, e.what());
    }
    if (!inbox.expecting()) break;
    inbox.request(std::move(result));
    result.clear();
  }
  comm.post(0, kTagFinal, std::move(result));
  comm.flush();
}

}  // namespace ts::sweep

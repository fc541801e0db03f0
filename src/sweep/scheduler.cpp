#include "tilesweep/sweep/scheduler.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <ostream>
#include <thread>

#include <fmt/format.h>

#include "tilesweep/sweep/collective.h"
#include "tilesweep/sweep/interrupt.h"
#include "tilesweep/sweep/unit_work.h"
#include "tilesweep/sweep/wire.h"

namespace ts::sweep {

namespace {

store::UnitResult score(const Plan& plan, std::size_t unit, int rank) {
  const WorkUnit& u = plan.units()[unit];
  if (u.id == injected_failure_unit())
    throw std::runtime_error(fmt::format("injected failure in unit {} (TILESWEEP_FAIL_UNIT)", u.id));
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
void serve(const Comm& comm, Queue& queue, const Comm::Message& m, const MasterHooks& hooks, int& workers) {
  if (m.tag == kTagInterrupt) {
    request_interrupt(std::atoi(m.bytes.c_str()));
    return;
  }
  // Recording syncs the journal to disk (~15 ms): the worker gets its next unit first.
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

void run_master(const Comm& comm, const Plan& plan, const std::vector<std::size_t>& todo, const MasterHooks& hooks,
                std::ostream& err) {
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
    } catch (const std::exception& e) {  // a unit failed here, or recording failed (journal: disk full, ...)
      local.detach();
      abort_job(comm, err, e.what());
    }
    if (hooks.stop_requested()) queue.stop();
    if (idle) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  local.join();
}

void run_worker(const Comm& comm, const Plan& plan, std::ostream& err) {
  auto next_unit = [&]() -> std::optional<std::uint64_t> {
    Comm::Message m = comm.receive();
    if (m.bytes.empty()) return std::nullopt;
    std::uint64_t unit = 0;
    std::memcpy(&unit, m.bytes.data(), sizeof unit);
    return unit;
  };
  comm.post(0, kTagRequest, {});
  std::optional<std::uint64_t> unit = next_unit();
  comm.post(0, unit ? kTagRequest : kTagFinal, {});  // from now on one unit ahead
  bool told = false;  // rank 0 knows this rank was interrupted
  while (unit) {
    std::string result;
    try {
      result = encode_unit(score(plan, *unit, comm.rank()));
    } catch (const UnitInterrupted&) {  // no result; rank 0 stops the job and then this rank
      if (!told) comm.post(0, kTagInterrupt, std::to_string(interrupt_signal()));
      told = true;
    } catch (const std::exception& e) {
      abort_job(comm, err, e.what());
    }
    unit = next_unit();
    comm.post(0, unit ? kTagRequest : kTagFinal, std::move(result));
  }
  comm.flush();
}

}  // namespace ts::sweep

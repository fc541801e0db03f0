#include "tilesweep/sweep/mpi_comm.h"

#include <mpi.h>

#include <cstdlib>
#include <deque>
#include <limits>
#include <vector>

#include "tilesweep/base/error.h"

namespace ts::sweep {

namespace {

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw InternalError(std::string("MPI call failed: ") + what);
}

}  // namespace

// Posted messages not yet known to have left, each with the buffer MPI reads from.
struct Comm::Outbox {
  std::deque<std::pair<MPI_Request, std::string>> pending;

  void reap() {
    while (!pending.empty()) {
      int done = 0;
      check(MPI_Test(&pending.front().first, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (!done) return;
      pending.pop_front();
    }
  }
};

Comm::Comm() : outbox_(std::make_unique<Outbox>()) {
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    initialized_here_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm local;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
        "split");
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
}

Comm::~Comm() {
  if (!initialized_here_) return;
  try {
    flush();
  } catch (const InternalError&) {  // a destructor must not throw; MPI_Finalize reports the rest
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::string Comm::broadcast(const std::string& text) const {
  unsigned long long n = rank_ == 0 ? text.size() : 0;
  check(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast");
  std::string out = rank_ == 0 ? text : std::string(n, '\0');
  if (n > 0)
    check(MPI_Bcast(out.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return out;
}

std::string Comm::allgather(const std::string& text) const {
  std::vector<int> sizes(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
  int mine = static_cast<int>(text.size());
  check(MPI_Allgather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD),
        "MPI_Allgather");
  long long total = 0;
  for (int r = 0; r < size_; ++r) offsets[r] = static_cast<int>(total), total += sizes[r];
  if (total > std::numeric_limits<int>::max())
    throw InternalError("allgather: more than 2 GiB of text");
  std::string out(static_cast<std::size_t>(total), '\0');
  check(MPI_Allgatherv(text.data(), mine, MPI_CHAR, out.data(), sizes.data(), offsets.data(),
                       MPI_CHAR, MPI_COMM_WORLD),
        "MPI_Allgatherv");
  return out;
}

void Comm::post(int dest, int tag, std::string bytes) const {
  outbox_->reap();
  auto& [request, buffer] = outbox_->pending.emplace_back(MPI_REQUEST_NULL, std::move(bytes));
  check(MPI_Isend(buffer.data(), static_cast<int>(buffer.size()), MPI_CHAR, dest, tag,
                  MPI_COMM_WORLD, &request),
        "MPI_Isend");
}

void Comm::flush() const {
  for (auto& [request, buffer] : outbox_->pending)
    check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
  outbox_->pending.clear();
}

void Comm::send(int dest, int tag, std::string_view bytes) const {
  check(MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, dest, tag, MPI_COMM_WORLD),
        "MPI_Send");
}

Comm::Message Comm::receive_probed(int source, int tag, int count) const {
  Message m{source, tag, std::string(static_cast<std::size_t>(count), '\0')};
  check(MPI_Recv(m.bytes.data(), count, MPI_CHAR, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Recv");
  return m;
}

std::optional<Comm::Message> Comm::try_receive() const {
  int flag = 0;
  MPI_Status st;
  check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st), "MPI_Iprobe");
  if (!flag) return std::nullopt;
  int count = 0;
  MPI_Get_count(&st, MPI_CHAR, &count);
  return receive_probed(st.MPI_SOURCE, st.MPI_TAG, count);
}

Comm::Message Comm::receive() const {
  MPI_Status st;
  check(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st), "MPI_Probe");
  int count = 0;
  MPI_Get_count(&st, MPI_CHAR, &count);
  return receive_probed(st.MPI_SOURCE, st.MPI_TAG, count);
}

void Comm::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

}  // namespace ts::sweep

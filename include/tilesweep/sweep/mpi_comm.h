// The sweep's only window onto MPI: world rank and size, a broadcast of text from rank 0, an
// allgather of text, tagged point-to-point byte messages (blocking, or posted: sent while the
// caller goes on working) and abort. Works without mpirun (an MPI singleton: one
// rank). Initializes MPI with MPI_THREAD_FUNNELED: only the thread that built the Comm may
// call it (TBB worker threads never do).
//
// Not copyable; one per process, constructed before and destroyed after all MPI use.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace ts::sweep {

class Comm {
 public:
  Comm();   // MPI_Init_thread unless MPI is already initialized
  ~Comm();  // MPI_Finalize when this Comm initialized it
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Ranks on this node (MPI_COMM_TYPE_SHARED), to share its cores between them.
  int local_size() const { return local_size_; }

  // Rank 0's `text` on every rank (other ranks' argument is ignored). Collective.
  std::string broadcast(const std::string& text) const;
  // Every rank's `text`, concatenated in rank order, on every rank. Collective.
  std::string allgather(const std::string& text) const;

  struct Message {
    int source = 0, tag = 0;
    std::string bytes;
  };
  void send(int dest, int tag, std::string_view bytes) const;
  // Starts sending `bytes` and returns at once; the message is on its way while the caller
  // works (a large one need not wait for the receiver to match it). Posted messages keep their
  // order with each other and with send(); flush() waits until all have left.
  void post(int dest, int tag, std::string bytes) const;
  void flush() const;
  std::optional<Message> try_receive() const;  // from any rank, any tag; nullopt when none waits
  Message receive() const;                     // blocks

  // Ends every rank of the job with `code` (MPI_Abort); never returns.
  [[noreturn]] void abort(int code) const;

 private:
  Message receive_probed(int source, int tag, int count) const;

  struct Outbox;
  std::unique_ptr<Outbox> outbox_;
  bool initialized_here_ = false;
  int rank_ = 0, size_ = 1, local_size_ = 1;
};

}  // namespace ts::sweep

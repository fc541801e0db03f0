// The state of one simulated NeuronCore between instructions: when each engine is free, the
// DMA engines' reservations, every buffer's versions and the HBM tensors' last writes. Every
// time carries the sequence number of its last update, so a loop can tell the state it touched
// (which moves with the loop) from the state it did not (which stays). Internal to ts_sim.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace ts::sim {

inline constexpr double kNever = -std::numeric_limits<double>::infinity();
inline constexpr int kEngines = 5;  // sem::Engine: Tensor, Vector, Scalar, GpSimd, Dma
// Steady-state markers (state vectors hold times relative to a reference, or these).
inline constexpr double kStale = -1e300;  // not updated by the loop being examined
inline constexpr double kUnset = -2e300;  // never set

struct Field {
  double t = kNever;
  std::uint64_t seq = 0;  // 0: never updated
};

// One copy of a multi-buffered tile: the version it holds. A version written in pieces (windows
// of the tile: `t[:, h * 512:(h + 1) * 512] = ...`) is one version: the pieces' columns are
// `covered`; a write overlapping them starts the next version (the tile's next allocation).
struct Slot {
  Field write_end, ready;
  int writer = -1;                           // engine of the last write
  std::array<Field, kEngines> reads{};       // per engine: end of the last read of this version
  std::array<Field, kEngines> prev_reads{};  // the reads of the version this one replaced (WAR)
  std::vector<std::pair<std::int64_t, std::int64_t>> covered;  // sorted [begin, end) columns
};

struct BufferState {
  std::int64_t versions = 0;  // writes so far (accumulation groups count once)
  std::vector<Slot> slots;    // version v lives in slots[v % bufs]

  // slots[v % bufs], without a division for the usual one or two buffers: this is asked for
  // every operand of every simulated instruction.
  std::size_t slot_of(std::int64_t v) const {
    const std::size_t n = slots.size(), u = static_cast<std::size_t>(v);
    return n == 1 ? 0 : n == 2 ? (u & 1) : u % n;
  }
};

// The DMA engines of a core as reservation lists. A transfer moves in the time all its engines
// are free at or after it is ready, in as many pieces as the gaps take (a DMA is many
// descriptors, and the engines serve their queues round-robin), earlier reservations first.
// Each engine keeps its last kKept busy stretches; time before the oldest kept one counts as
// busy. While every transfer spans all engines their lists are alike and kept once.
class DmaEngines {
 public:
  explicit DmaEngines(int engines);

  // Reserves engines first, first + 1, ... (count of them, mod the engine count) for
  // `duration` of transfer; returns the first piece's start and the last piece's end.
  std::pair<double, double> reserve(double ready, int first, int count, double duration,
                                    std::uint64_t seq);

  int size() const { return n_; }
  // Steady state: appends the engines' state relative to `ref` (engine (rotation + j) % n at
  // position j; engines not updated after seq0 as one marker each).
  void append_state(std::vector<double>& out, std::int64_t rotation, std::uint64_t seq0,
                    double ref) const;
  // Moves the engines updated after seq0 `delta` later (the time before their first moved
  // stretch counts as busy), then engine e's state to e + by.
  void shift(double delta, std::uint64_t seq0, std::int64_t by);

 private:
  static constexpr int kKept = 8;
  using Stretch = std::pair<double, double>;
  struct Engine {
    double floor = kNever;
    std::array<Stretch, kKept + 1> busy{};  // sorted, disjoint; one spare for an insertion
    int count = 0;
    std::uint64_t seq = 0;
  };
  static void insert(Engine& e, double start, double end);
  void append_engine(std::vector<double>& out, const Engine& e, std::uint64_t seq0,
                     double ref) const;
  // The busy stretches of the engines after t, sorted by start (may overlap).
  void busy_after(int first, int count, double t);
  int n_;
  bool uniform_ = true;  // all engines alike: engines_[0] stands for all
  std::vector<Engine> engines_;
  std::vector<Stretch> busy_, pieces_;  // scratch
};

// What a simulation adds up, extrapolated with the loops.
struct Totals {
  std::array<double, kEngines> busy{};
  double read_bytes = 0, write_bytes = 0, instructions = 0;
  double simulated = 0;
};

struct CoreState {
  explicit CoreState(int dma_engines) : dma(dma_engines) {}
  std::uint64_t seq = 0;
  std::array<Field, 4> engine_free{};  // compute engines
  std::vector<BufferState> buffers;    // per program buffer (HBM buffers: unused)
  std::vector<Field> hbm_written;      // per program buffer: end of the last store into it
  DmaEngines dma;
  std::int64_t dma_count = 0;  // DMAs issued: the round-robin queue position
  Field max_end;               // the latest end so far
  double not_before = 0;       // no instruction starts earlier (the last barrier's end)
  Totals totals;
};

}  // namespace ts::sim

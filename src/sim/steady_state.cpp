#include "steady_state.h"

#include <algorithm>
#include <cmath>

namespace ts::sim {

namespace {

// A field as the snapshot records it: relative to ref, or a marker.
inline double relative(const Field& f, std::uint64_t seq0, double ref) {
  if (f.seq <= seq0) return kStale;
  return f.t == kNever ? kUnset : f.t - ref;
}

void append(std::vector<double>& out, const Field& f, std::uint64_t seq0, double ref) {
  out.push_back(relative(f, seq0, ref));
}

// Writes the buffer's slots, the newest version first, at `o`; returns the end.
double* write_buffer(double* o, const BufferState& bs, std::uint64_t seq0, double ref) {
  const std::int64_t n = static_cast<std::int64_t>(bs.slots.size());
  std::int64_t i = ((bs.versions - 1) % n + n) % n;
  for (std::int64_t j = 0; j < n; ++j) {
    const Slot& slot = bs.slots[static_cast<std::size_t>(i)];
    *o++ = relative(slot.write_end, seq0, ref);
    *o++ = relative(slot.ready, seq0, ref);
    *o++ = slot.writer;
    for (const Field& f : slot.reads) *o++ = relative(f, seq0, ref);
    i = i == 0 ? n - 1 : i - 1;
  }
  return o;
}

void shift(Field& f, double delta, std::uint64_t seq0) {
  if (f.seq > seq0 && f.t != kNever) f.t += delta;
}

}  // namespace

void take_snapshot(const CoreState& s, const Footprint& fp, std::uint64_t seq0, Snapshot& out) {
  out.ref = s.max_end.t;
  out.state.clear();
  out.versions.clear();
  for (const Field& f : s.engine_free) append(out.state, f, seq0, out.ref);
  s.dma.append_state(out.state, s.dma_count, seq0, out.ref);
  // The buffers' part, the bulk of it, written in place: this runs after every iteration of a
  // watched loop.
  std::size_t size = out.state.size();
  for (int b : fp.buffers) size += s.buffers[b].slots.size() * (3 + kEngines);
  std::size_t at = out.state.size();
  out.state.reserve(size + fp.tensors.size());
  out.state.resize(size);
  double* o = out.state.data() + at;
  out.versions.reserve(fp.buffers.size());
  for (int b : fp.buffers) {
    out.versions.push_back(s.buffers[b].versions);
    o = write_buffer(o, s.buffers[b], seq0, out.ref);
  }
  for (int b : fp.tensors) append(out.state, s.hbm_written[b], seq0, out.ref);
  out.dma_count = s.dma_count;
  out.totals = s.totals;
}

bool periodic(const Snapshot& a, const Snapshot& b, double horizon_periods) {
  double delta = b.ref - a.ref;
  if (!(delta > 0) || a.state.size() != b.state.size()) return false;
  double tol = 1e-9 * std::max(1.0, std::abs(b.ref));
  // No engine can be busy longer than a period in each period of a steady state: a loop that
  // asks more of an engine (the DMA engines after loads that ran ahead into their free time)
  // still has to slow down, however alike its recent state looks.
  for (int e = 0; e < kEngines; ++e)
    if (b.totals.busy[e] - a.totals.busy[e] > delta + tol) return false;
  // Times more than horizon_periods periods back count as equally old: nothing the loop does next
  // waits for them (a busy stretch that began long ago, the reads of a version freed long ago).
  double horizon = -horizon_periods * delta;
  for (std::size_t i = 0; i < a.state.size(); ++i) {
    double x = a.state[i], y = b.state[i];
    if (x < horizon && y < horizon) continue;
    if (std::abs(x - y) > tol) return false;
  }
  return true;
}

void extrapolate(CoreState& s, const Footprint& fp, const Snapshot& a, const Snapshot& b,
                 std::int64_t repeats, std::uint64_t seq0) {
  const double r = static_cast<double>(repeats);
  const double delta = (b.ref - a.ref) * r;
  for (Field& f : s.engine_free) shift(f, delta, seq0);
  s.dma.shift(delta, seq0, (b.dma_count - a.dma_count) * repeats);
  s.dma_count += (b.dma_count - a.dma_count) * repeats;
  for (std::size_t i = 0; i < fp.buffers.size(); ++i) {
    BufferState& bs = s.buffers[fp.buffers[i]];
    std::int64_t writes = (b.versions[i] - a.versions[i]) * repeats;
    bs.versions += writes;
    for (Slot& slot : bs.slots) {
      shift(slot.write_end, delta, seq0);
      shift(slot.ready, delta, seq0);
      for (Field& f : slot.reads) shift(f, delta, seq0);
      for (Field& f : slot.prev_reads) shift(f, delta, seq0);
    }
    std::int64_t n = static_cast<std::int64_t>(bs.slots.size()), by = writes % n;
    std::rotate(bs.slots.begin(), bs.slots.end() - by, bs.slots.end());
  }
  for (int t : fp.tensors) shift(s.hbm_written[t], delta, seq0);
  shift(s.max_end, delta, seq0);
  for (int e = 0; e < kEngines; ++e) s.totals.busy[e] += (b.totals.busy[e] - a.totals.busy[e]) * r;
  s.totals.read_bytes += (b.totals.read_bytes - a.totals.read_bytes) * r;
  s.totals.write_bytes += (b.totals.write_bytes - a.totals.write_bytes) * r;
  s.totals.instructions += (b.totals.instructions - a.totals.instructions) * r;
}

}  // namespace ts::sim

#include "timeline.h"

#include <algorithm>

namespace ts::sim {

namespace {
constexpr int kDma = static_cast<int>(sem::Engine::Dma);
}  // namespace

Timeline::Timeline(const lower::Program& p, const target::Target& t, std::vector<InstTiming> timing,
                   std::vector<TraceEvent>* trace)
    : p_(p), t_(t), timing_(std::move(timing)), trace_(trace), s_(t.dma.engines_per_core) {
  s_.buffers.resize(p.buffers.size());
  for (std::size_t b = 0; b < p.buffers.size(); ++b)
    if (p.buffers[b].memory != sem::Memory::Hbm)
      s_.buffers[b].slots.resize(std::max(1, p.buffers[b].bufs));
  s_.hbm_written.resize(p.buffers.size());
  rider_.assign(p.insts.size(), -1);
  for (std::size_t i = 0; i < p.insts.size(); ++i)
    if (p.insts[i].rides >= 0)
      rider_[static_cast<std::size_t>(p.insts[i].rides)] = static_cast<int>(i);
  for (int from = -1; from < kEngines; ++from)
    for (int to = 0; to < kEngines; ++to)
      links_[from + 1][to] = to == kDma
                                 ? t.dma.start_ns  // semaphore-to-start of a DMA, whoever signals
                             : from == to ? 0.0
                                          : t.overheads.semaphore_ns;
}

Timeline::Columns Timeline::columns(const lower::Inst& in, const std::vector<std::int64_t>& iter) {
  Columns cols;
  if (in.out >= 0 && !in.out_window.whole()) {
    cols.begin = in.out_window.start(iter);
    cols.end = in.out_window.end(iter);  // a strided window: the columns it spans
  }
  return cols;
}

// A rider (lower/reduction_fusion.h) runs with the instruction it rides on, right after it on
// its engine: the two are one hardware instruction, which starts when both outputs may be
// written.
void Timeline::execute(int inst, const std::vector<std::int64_t>& iter) {
  const lower::Inst& in = p_.insts[inst];
  if (in.rides >= 0) return;
  Columns cols = columns(in, iter);
  if (timing_[inst].dma) return run_dma(inst);
  bool continues =
      in.accumulate_block >= 0 && iter[in.accumulate_block] > 0 && s_.buffers[in.out].versions > 0;
  const int r = rider_[inst];
  if (r < 0) return run_compute(inst, continues, cols);
  const Columns rc = columns(p_.insts[r], iter);
  run_compute(inst, continues, cols, write_wait(p_.insts[r], timing_[inst].engine, false, rc));
  run_compute(r, false, rc, kNever, true);
}

bool Timeline::joins(int b, Columns c) const {
  const BufferState& bs = s_.buffers[b];
  if (c.whole() || bs.versions == 0) return false;
  const auto& cov = bs.slots[bs.slot_of(bs.versions - 1)].covered;
  if (cov.empty()) return false;  // written whole
  // The pieces are disjoint and sorted, so their ends are sorted too: the last piece that begins
  // before c ends is the only one that can overlap it.
  auto it = std::lower_bound(cov.begin(), cov.end(), std::make_pair(c.end, c.end));
  return it == cov.begin() || std::prev(it)->second <= c.begin;
}

double Timeline::join_ready(int b, int e) const {
  const BufferState& bs = s_.buffers[b];
  const Slot& slot = bs.slots[bs.slot_of(bs.versions - 1)];
  double w = kNever;
  for (int r = 0; r < kEngines; ++r) w = std::max(w, slot.prev_reads[r].t + link(r, e));
  return w;
}

void Timeline::cover(Slot& slot, Columns c) {
  auto& cov = slot.covered;
  auto it = std::lower_bound(cov.begin(), cov.end(), std::make_pair(c.begin, c.begin));
  if (it != cov.begin() && std::prev(it)->second >= c.begin) --it;  // touches the one before
  auto last = it;
  while (last != cov.end() && last->first <= c.end) {
    c.begin = std::min(c.begin, last->first);
    c.end = std::max(c.end, last->second);
    ++last;
  }
  it = cov.erase(it, last);
  cov.insert(it, {c.begin, c.end});
}

double Timeline::read_ready(int b, int e, int lag) const {
  const BufferState& bs = s_.buffers[b];
  if (bs.versions <= lag) return kNever;  // a constant tile, or one never written: at the start
  const Slot& slot = bs.slots[bs.slot_of(bs.versions - 1 - lag)];
  return slot.ready.t + link(slot.writer, e);
}

double Timeline::write_ready(int b, int e, bool continues) const {
  const BufferState& bs = s_.buffers[b];
  std::int64_t v = continues ? bs.versions - 1 : bs.versions;
  const Slot& slot = bs.slots[bs.slot_of(v)];
  double w = slot.write_end.t + link(slot.writer, e);  // WAW (an accumulation extends its group)
  if (continues) return w;
  for (int r = 0; r < kEngines; ++r)
    w = std::max(w, slot.reads[r].t + link(r, e));  // WAR on v - bufs
  return w;
}

double Timeline::war_ready(int b, int e) const {
  const BufferState& bs = s_.buffers[b];
  const Slot& slot = bs.slots[bs.slot_of(bs.versions)];
  double w = kNever;
  for (int r = 0; r < kEngines; ++r) w = std::max(w, slot.reads[r].t + link(r, e));
  return w;
}

double Timeline::read_war_ready(int b, int e) const {
  const BufferState& bs = s_.buffers[b];
  const Slot& slot = bs.slots[bs.slot_of(bs.versions - 1)];
  double w = slot.write_end.t + link(slot.writer, e);
  for (int r = 0; r < kEngines; ++r) w = std::max(w, slot.reads[r].t + link(r, e));
  return w;
}

void Timeline::mark_read(int b, int e, double end, int lag) {
  BufferState& bs = s_.buffers[b];
  if (bs.versions <= lag) return;
  Field& f = bs.slots[bs.slot_of(bs.versions - 1 - lag)].reads[e];
  set(f, std::max(f.t, end));
}

void Timeline::mark_write(int b, int e, double end, double ready, bool continues, Columns c) {
  BufferState& bs = s_.buffers[b];
  Slot& slot = bs.slots[bs.slot_of(continues ? bs.versions - 1 : bs.versions)];
  set(slot.write_end, continues ? std::max(slot.write_end.t, end) : end);
  set(slot.ready, continues ? std::max(slot.ready.t, ready) : ready);
  slot.writer = e;
  if (!continues) {
    slot.prev_reads = slot.reads;
    for (Field& f : slot.reads) set(f, kNever);
    slot.covered.clear();
    ++bs.versions;
  }
  if (!c.whole()) cover(slot, c);
}

void Timeline::finish(int inst, int engine, double start, double end) {
  if (end > s_.max_end.t) set(s_.max_end, end);
  s_.totals.instructions += timing_[inst].instructions;
  s_.totals.simulated += 1;
  if (trace_) trace_->push_back(TraceEvent{inst, static_cast<sem::Engine>(engine), start, end});
}

void Timeline::barrier(double ns) { s_.not_before = std::max(s_.not_before, s_.max_end.t + ns); }

// An in-place update (the instruction reads the buffer it writes, lower/materialize/in_place.cpp)
// writes the version it reads, in that version's copy: RAW on its writer (read_ready), WAR on
// every other reader of it; it starts no new version, so the buffer's copies keep rotating once
// per loop iteration, as the hardware's in-place write does.
double Timeline::write_wait(const lower::Inst& in, int e, bool continues, Columns cols) const {
  const bool in_place = !continues && s_.buffers[in.out].versions > 0 &&
                        std::find(in.in.begin(), in.in.end(), in.out) != in.in.end();
  const bool join = !continues && !in_place && joins(in.out, cols);
  return join       ? join_ready(in.out, e)
         : in_place ? read_war_ready(in.out, e)
                    : write_ready(in.out, e, continues);
}

void Timeline::run_compute(int inst, bool continues, Columns cols, double floor, bool rider) {
  const lower::Inst& in = p_.insts[inst];
  const InstTiming& tm = timing_[inst];
  const int e = tm.engine;
  const bool in_place = !continues && s_.buffers[in.out].versions > 0 &&
                        std::find(in.in.begin(), in.in.end(), in.out) != in.in.end();
  const bool join = !continues && !in_place && joins(in.out, cols);
  double start = std::max({s_.not_before, s_.engine_free[e].t, floor});
  for (std::size_t j = rider ? 1 : 0; j < in.in.size(); ++j)
    start = std::max(start, read_ready(in.in[j], e, in.lag(j)));
  start = std::max(start, write_wait(in, e, continues, cols));
  double end = start + tm.busy_ns;
  set(s_.engine_free[e], end);
  for (std::size_t j = 0; j < in.in.size(); ++j) mark_read(in.in[j], e, end, in.lag(j));
  mark_write(in.out, e, end, end + tm.ready_ns, continues || join || in_place, cols);
  s_.totals.busy[e] += tm.busy_ns;
  finish(inst, e, start, end);
}

void Timeline::run_dma(int inst) {
  const lower::Inst& in = p_.insts[inst];
  const InstTiming& tm = timing_[inst];
  double ready = std::max(t_.dma.dge_ns, s_.not_before);
  if (in.store) {
    ready = std::max(ready, read_ready(in.in.front(), kDma, in.lag(0)));
  } else {
    // A load into a window of a wider buffer (one tile of an imported kernel's on-chip array)
    // writes columns the previous window load did not: WAR only, no WAW wait between them. Each
    // such load is a version of its own (joining them into one version makes the next block's
    // loads wait for every read of the previous block: the NKI matmul tutorial v4 then simulates
    // 1.38x of its measurement instead of 1.02x; WAR is tracked per version, not per column).
    if (in.out_window.whole())
      ready = std::max(ready, write_ready(in.out, kDma, false));
    else
      ready = std::max(ready, war_ready(in.out, kDma));
    ready = std::max(
        ready, s_.hbm_written[tm.hbm_buffer].t + t_.dma.start_ns);  // stage-to-stage through HBM
  }
  const int n = s_.dma.size();
  int first = static_cast<int>(s_.dma_count % n);
  ++s_.dma_count;
  auto [start, end] = s_.dma.reserve(ready, first, tm.dma_engines, tm.transfer_ns, ++s_.seq);
  if (in.store) {
    mark_read(in.in.front(), kDma, end, in.lag(0));
    Field& w = s_.hbm_written[tm.hbm_buffer];
    set(w, std::max(w.t, end));
    s_.totals.write_bytes += tm.hbm_bytes;
  } else {
    mark_write(in.out, kDma, end, end, false, Columns{});
    s_.totals.read_bytes += tm.hbm_bytes;
  }
  s_.totals.busy[kDma] += tm.transfer_ns * tm.dma_engines / n;
  finish(inst, kDma, start, end);
}

}  // namespace ts::sim

#include "tilesweep/lower/program.h"

#include <algorithm>
#include <map>

#include "tilesweep/base/error.h"

namespace ts::lower {

std::int64_t Buffer::elements() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::int64_t Buffer::bytes_per_partition() const {
  if (shape.empty()) return ir::dtype_bytes(dtype);
  return elements() / shape.front() * ir::dtype_bytes(dtype);
}

std::int64_t Buffer::bytes() const { return elements() * ir::dtype_bytes(dtype); }

std::int64_t Window::start(const std::vector<std::int64_t>& iter) const {
  std::int64_t s = offset;
  for (const auto& [block, step] : terms) s += iter[block] * step;
  return s;
}

bool Guard::holds(const std::vector<std::int64_t>& iter) const {
  std::int64_t s = offset;
  for (const auto& [block, step] : terms) s += iter[block] * step;
  return s >= 0;
}

std::int64_t Access::start(std::size_t dim, const std::vector<std::int64_t>& iter) const {
  std::int64_t s = offset.empty() ? 0 : offset[dim];
  for (const auto& [block, step] : terms[dim]) s += iter[block] * step;
  return s;
}

bool Access::repeats_any() const {
  return std::any_of(repeat.begin(), repeat.end(), [](std::int64_t r) { return r > 1; });
}

std::int64_t Access::index(std::size_t dim, const std::vector<std::int64_t>& iter,
                           std::int64_t j) const {
  std::int64_t s = start(dim, iter);
  std::int64_t r = repeats(dim);
  if (r == 1) return s + j * step(dim);
  std::int64_t v = s + j;
  std::int64_t group = v >= 0 ? v / r : -((-v + r - 1) / r);  // floor
  return base[dim] + group * step(dim);
}

// The longest run of consecutive HBM bytes one DMA row reads: the innermost dims the access
// covers whole, times the first partial one. A repeated dim (a stride-0 access dim) ends the run;
// repeated innermost, it reads element by element.
std::int64_t Access::contiguous_bytes(const std::vector<std::int64_t>& hbm_shape,
                                      int dtype_bytes) const {
  std::int64_t run = 1;
  for (std::size_t d = hbm_shape.size(); d-- > 0;) {
    if (repeats(d) > 1) {
      if (run == 1 && extent[d] > 1) return dtype_bytes;
      break;
    }
    if (step(d) != 1) return dtype_bytes;  // a strided innermost dim reads element by element
    run *= extent[d];
    if (extent[d] != hbm_shape[d]) break;
  }
  // A transposing access (tile dims out of buffer order) reads one element at a time.
  int last = -1;
  for (std::size_t d = 0; d < tile_dim.size(); ++d) {
    if (tile_dim[d] < 0) continue;
    if (tile_dim[d] < last) return dtype_bytes;
    last = tile_dim[d];
  }
  return run * dtype_bytes;
}

double Program::spill_bytes() const {
  if (std::none_of(buffers.begin(), buffers.end(), [](const Buffer& b) { return b.spill; }))
    return 0;
  auto runs = executions();
  double bytes = 0;
  for (std::size_t i = 0; i < insts.size(); ++i) {
    const Inst& in = insts[i];
    if (!in.dma || in.hbm.buffer < 0 || !buffers[in.hbm.buffer].spill) continue;
    double elements = 1;
    for (auto e : in.hbm.extent) elements *= static_cast<double>(e);
    bytes +=
        elements * ir::dtype_bytes(buffers[in.hbm.buffer].dtype) * static_cast<double>(runs[i]);
  }
  return bytes;
}

namespace {

// Counts the runs of block b's instructions (and its loops') over the iterations its guard and
// those of the loops inside let through, adding `times` per iteration of b. Enumerates only the
// loops whose subtree holds a guard (`guarded`); the others multiply.
void count_runs(const Program& p, int b, std::int64_t times, const std::vector<char>& guarded,
                std::vector<std::int64_t>& iter, std::vector<std::int64_t>& count) {
  const Block& blk = p.blocks[b];
  auto body = [&](std::int64_t per) {
    for (const auto& item : blk.items) {
      if (item.inst >= 0) {
        count[item.inst] += per;
        continue;
      }
      if (guarded[item.block]) {
        count_runs(p, item.block, per, guarded, iter, count);
        continue;
      }
      // No guard inside: every iteration of the inner loops runs.
      std::vector<std::pair<int, std::int64_t>> todo{{item.block, per}};
      while (!todo.empty()) {
        auto [c, n] = todo.back();
        todo.pop_back();
        std::int64_t runs = n * p.blocks[c].trips;
        for (const auto& it : p.blocks[c].items) {
          if (it.inst >= 0) count[it.inst] += runs;
          if (it.block >= 0) todo.push_back({it.block, runs});
        }
      }
    }
  };
  if (!guarded[b]) {
    body(times * blk.trips);
    return;
  }
  for (std::int64_t t = 0; t < blk.trips; ++t) {
    iter[b] = t;
    if (!blk.guard || blk.guard->holds(iter)) body(times);
  }
  iter[b] = 0;
}

}  // namespace

std::vector<std::int64_t> Program::executions() const {
  std::vector<std::int64_t> count(insts.size(), 0);
  // A block is `guarded` when it or a loop inside it has a guard (blocks are listed parents
  // first: materialization appends children after their parents).
  std::vector<char> guarded(blocks.size(), 0);
  for (std::size_t b = blocks.size(); b-- > 0;)
    if (blocks[b].guard) {
      for (int c = static_cast<int>(b); c >= 0; c = blocks[c].parent) guarded[c] = 1;
    }
  std::vector<std::int64_t> iter(blocks.size(), 0);
  count_runs(*this, 0, 1, guarded, iter, count);
  return count;
}

namespace {

// on_chip_use over the buffers of the nests `counted` accepts (and those of no nest, -1).
template <class Counted>
OnChipUse counted_use(const Program& p, std::int64_t bank_bytes, Counted counted) {
  std::map<int, OnChipUse> per_nest;
  for (const auto& b : p.buffers) {
    if (b.memory == sem::Memory::Hbm || (b.nest >= 0 && !counted(b.nest))) continue;
    OnChipUse& u = per_nest[b.nest];
    std::int64_t bytes = b.bytes_per_partition() * std::max(1, b.bufs);
    if (b.memory == sem::Memory::Sbuf) u.sbuf_bytes += bytes;
    if (b.memory == sem::Memory::Psum) {
      u.psum_bytes += bytes;
      u.psum_banks += static_cast<int>((b.bytes_per_partition() + bank_bytes - 1) / bank_bytes) *
                      std::max(1, b.bufs);
    }
  }
  OnChipUse total = per_nest[-1], widest;
  for (const auto& [nest, u] : per_nest) {
    if (nest < 0) continue;
    widest.sbuf_bytes = std::max(widest.sbuf_bytes, u.sbuf_bytes);
    widest.psum_bytes = std::max(widest.psum_bytes, u.psum_bytes);
    widest.psum_banks = std::max(widest.psum_banks, u.psum_banks);
  }
  total.sbuf_bytes += widest.sbuf_bytes;
  total.psum_bytes += widest.psum_bytes;
  total.psum_banks += widest.psum_banks;
  return total;
}

}  // namespace

OnChipUse on_chip_use(const Program& p, std::int64_t bank_bytes) {
  return counted_use(p, bank_bytes, [](int) { return true; });
}

OnChipUse nest_use(const Program& p, std::int64_t bank_bytes, int nest, int groups) {
  return counted_use(p, bank_bytes, [&](int n) { return n == nest || n >= groups; });
}

void validate(const Program& p) {
  auto buffer_ok = [&](int b) { return b >= 0 && b < static_cast<int>(p.buffers.size()); };
  TS_CHECK(!p.blocks.empty() && p.blocks[0].parent == -1, "program has no top-level block");
  std::vector<int> seen(p.insts.size(), 0);
  for (std::size_t b = 0; b < p.blocks.size(); ++b) {
    const Block& blk = p.blocks[b];
    TS_CHECK(blk.trips >= 1, "block {} has {} trips", b, blk.trips);
    TS_CHECK(b == 0 || (blk.parent >= 0 && blk.parent < static_cast<int>(b)), "block {} parent {}",
             b, blk.parent);
    if (blk.guard)
      for (const auto& [g, step] : blk.guard->terms) {
        bool enclosing = false;
        for (int c = static_cast<int>(b); c > 0 && !enclosing; c = p.blocks[c].parent)
          enclosing = c == g;
        TS_CHECK(enclosing, "block {}'s guard reads block {}, not the block or one around it", b,
                 g);
      }
    for (const auto& item : blk.items) {
      TS_CHECK((item.inst >= 0) != (item.block >= 0), "block {} has an empty item", b);
      if (item.inst >= 0) ++seen.at(item.inst);
      if (item.block >= 0)
        TS_CHECK(p.blocks.at(item.block).parent == static_cast<int>(b), "block {} nesting", b);
    }
  }
  for (std::size_t i = 0; i < p.insts.size(); ++i) {
    const Inst& in = p.insts[i];
    TS_CHECK(seen[i] == 1, "instruction {} appears {} times in the loop nest", i, seen[i]);
    TS_CHECK(in.spec != nullptr, "instruction {} has no spec", i);
    TS_CHECK(std::find(in.spec->engines.begin(), in.spec->engines.end(), in.engine) !=
                 in.spec->engines.end(),
             "instruction {} ({}) cannot run on engine {}", i, in.spec->op.name,
             sem::engine_name(in.engine));
    TS_CHECK(in.rides < 0 || (in.rides < static_cast<int>(p.insts.size()) && in.fused &&
                              in.reduces && in.rides != static_cast<int>(i)),
             "instruction {} rides on {} without a fused form", i, in.rides);
    for (int b : in.in)
      TS_CHECK(buffer_ok(b) && p.buffers[b].memory != sem::Memory::Hbm,
               "instruction {} reads buffer {}", i, b);
    TS_CHECK(in.in_lag.size() <= in.in.size(), "instruction {} has {} lags for {} operands", i,
             in.in_lag.size(), in.in.size());
    for (std::size_t j = 0; j < in.in_lag.size(); ++j)
      TS_CHECK(in.in_lag[j] >= 0 && in.in_lag[j] < p.buffers[in.in[j]].bufs,
               "instruction {} reads {} {} versions back, but it has {} copies", i,
               p.buffers[in.in[j]].name, in.in_lag[j], p.buffers[in.in[j]].bufs);
    auto window_ok = [](const Window& w) {
      return w.step >= 1 && w.width >= 0 && w.repeat >= 1 && (w.repeat == 1 || !w.whole());
    };
    TS_CHECK(window_ok(in.out_window) &&
                 std::all_of(in.in_window.begin(), in.in_window.end(), window_ok),
             "instruction {} has a window of step < 1, repeat < 1 or negative width", i);
    TS_CHECK(in.out_window.repeat == 1, "instruction {} writes through a repeating window", i);
    TS_CHECK(!in.dma || in.in_window.empty() || in.in_window[0].repeat == 1,
             "DMA {} reads a repeating window (its HBM access repeats instead)", i);
    if (in.dma) {
      TS_CHECK(buffer_ok(in.hbm.buffer) && p.buffers[in.hbm.buffer].memory == sem::Memory::Hbm,
               "DMA {} has no HBM side", i);
      const Buffer& t = p.buffers[in.hbm.buffer];
      TS_CHECK(in.hbm.extent.size() == t.shape.size() && in.hbm.terms.size() == t.shape.size() &&
                   in.hbm.tile_dim.size() == t.shape.size(),
               "DMA {} access rank differs from {}", i, t.name);
      TS_CHECK((in.hbm.repeat.empty() && in.hbm.base.empty()) ||
                   (in.hbm.repeat.size() == t.shape.size() && in.hbm.base.size() == t.shape.size()),
               "DMA {} repeat rank differs from {}", i, t.name);
      for (std::size_t d = 0; d < in.hbm.repeat.size(); ++d)
        TS_CHECK(in.hbm.repeat[d] >= 1 && (in.hbm.repeat[d] == 1 || !in.store),
                 "DMA {} repeats dim {} of {} {} times{}", i, d, t.name, in.hbm.repeat[d],
                 in.store ? " in a store (a write needs one element per position)" : "");
      TS_CHECK(
          in.store ? (in.in.size() == 1 && in.out == -1) : (in.in.empty() && buffer_ok(in.out)),
          "DMA {} operands", i);
    } else {
      TS_CHECK(buffer_ok(in.out) && p.buffers[in.out].memory != sem::Memory::Hbm,
               "instruction {} writes buffer {}", i, in.out);
    }
  }
}

}  // namespace ts::lower

#include "tilesweep/sim/execute.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>

#include "tilesweep/base/error.h"
#include "tilesweep/ir/graph_edit.h"
#include "tilesweep/ir/interpreter.h"

namespace ts::sim {

namespace {

using lower::Access;
using lower::Inst;
using lower::Program;

double round_f32(double v) { return static_cast<double>(static_cast<float>(v)); }

std::string shape_str(const std::vector<std::int64_t>& s) {
  return fmt::format("[{}]", fmt::join(s, ", "));
}

// Runs a program: one tensor per buffer (on-chip buffers: one tile), the current iteration of
// every block, and the one-node kernel of each compute instruction, built on first use.
class Runner {
 public:
  Runner(const Program& p, const std::vector<ir::Tensor>& inputs);
  void walk(int block, std::int64_t first = 0, std::int64_t last = -1);
  void run_cores();
  std::vector<ir::Tensor> outputs() const;

 private:
  std::string what(int i) const;
  int root(int b) const { return p_.buffers[b].alias >= 0 ? root(p_.buffers[b].alias) : b; }
  ir::Tensor read(int buf, const lower::Window* w, int lag = 0) const;
  std::int64_t window_start(int buf, const lower::Window& w) const;
  void write(int buf, const lower::Window* w, ir::Tensor v, bool add);
  void new_version(int buf, const lower::Window* w, bool add);
  void dma(int i);
  void compute(int i);
  const ir::Kernel& kernel(int i);

  const Program& p_;
  std::vector<ir::Tensor> bufs_;
  std::vector<std::int64_t> iter_;
  // Per block: iterations of its current run that were not skipped by its guard (an
  // accumulation's first such iteration writes, the later ones add).
  std::vector<std::int64_t> ran_;
  std::vector<std::optional<ir::Kernel>> kernels_;
  // Buffers some instruction reads versions back (Inst::in_lag): their earlier copies, latest
  // first (bufs - 1 of them; every write of such a buffer starts a version).
  std::vector<bool> lagged_;
  std::vector<std::deque<ir::Tensor>> past_;
  std::vector<std::vector<bool>> covered_;  // of a lagged buffer's latest version, by column
};

Runner::Runner(const Program& p, const std::vector<ir::Tensor>& inputs)
    : p_(p),
      iter_(p.blocks.size(), 0),
      ran_(p.blocks.size(), 0),
      kernels_(p.insts.size()),
      lagged_(p.buffers.size(), false),
      past_(p.buffers.size()),
      covered_(p.buffers.size()) {
  lower::validate(p);
  for (const Inst& in : p.insts)
    for (std::size_t j = 0; j < in.in.size(); ++j)
      if (in.lag(j) > 0) lagged_[in.in[j]] = true;
  // An alias (a reshape) has no storage of its own: it reads its root's elements row-major.
  for (std::size_t b = 0; b < p.buffers.size(); ++b) {
    bufs_.emplace_back(p.buffers[b].alias >= 0 ? std::vector<std::int64_t>{} : p.buffers[b].shape);
    TS_CHECK(p.buffers[b].alias < 0 ||
                 p.buffers[root(static_cast<int>(b))].elements() == p.buffers[b].elements(),
             "buffer {} is a view of {} with a different element count", p.buffers[b].name,
             p.buffers[root(static_cast<int>(b))].name);
  }
  for (std::size_t b = 0; b < p.buffers.size(); ++b) {
    const lower::Buffer& buf = p.buffers[b];
    if (buf.param < 0) continue;
    if (buf.param >= static_cast<int>(inputs.size()))
      throw UserError(fmt::format("program '{}' reads parameter {} ({}), but {} inputs were given",
                                  p.kernel, buf.param, buf.name, inputs.size()));
    const ir::Tensor& in = inputs[buf.param];
    if (in.shape != buf.shape)
      throw UserError(fmt::format("input {} ({}) has shape {}, expected {}", buf.param, buf.name,
                                  in.shape_str(), shape_str(buf.shape)));
    ir::Tensor& t = bufs_[root(static_cast<int>(b))];
    for (std::size_t j = 0; j < in.data.size(); ++j) t.data[j] = round_f32(in.data[j]);
  }
}

// The operand an instruction sees: the whole on-chip buffer, or a window of its last dim
// (`width` columns `step` apart, each read `repeat` times); `lag` versions back (a software-
// pipelined read).
ir::Tensor Runner::read(int buf, const lower::Window* w, int lag) const {
  TS_CHECK(lag <= static_cast<int>(past_[buf].size()), "{} read {} versions back, {} kept",
           p_.buffers[buf].name, lag, past_[buf].size());
  const ir::Tensor& t = lag == 0 ? bufs_[buf] : past_[buf][static_cast<std::size_t>(lag - 1)];
  if (!w || w->whole()) return t;
  std::int64_t cols = t.shape.back(), start = window_start(buf, *w);
  std::vector<std::int64_t> shape = t.shape;
  shape.back() = w->width;
  ir::Tensor v(shape);
  for (std::int64_t r = 0; r < t.size() / cols; ++r)
    for (std::int64_t c = 0; c < w->width; ++c)
      v.data[r * w->width + c] = t.data[r * cols + w->column(start, c)];
  return v;
}

// The first column of window `w` of `buf` at this iteration, checked to lie inside the buffer.
std::int64_t Runner::window_start(int buf, const lower::Window& w) const {
  std::int64_t cols = bufs_[buf].shape.back(), start = w.start(iter_), end = w.end(iter_);
  TS_CHECK(w.step >= 1 && start >= 0 && end <= cols,
           "window [{}, {}) step {} outside {} columns of {}", start, end, w.step, cols,
           p_.buffers[buf].name);
  return start;
}

void Runner::write(int buf, const lower::Window* w, ir::Tensor v, bool add) {
  ir::Tensor& t = bufs_[buf];
  if (lagged_[buf]) new_version(buf, w, add);
  if (!w || w->whole()) {
    if (!add) {
      t.data = std::move(v.data);
      return;
    }
    for (std::size_t j = 0; j < v.data.size(); ++j) t.data[j] = round_f32(t.data[j] + v.data[j]);
    return;
  }
  std::int64_t cols = t.shape.back(), start = window_start(buf, *w);
  for (std::int64_t r = 0; r < t.size() / cols; ++r)
    for (std::int64_t c = 0; c < w->width; ++c) {
      double& dst = t.data[r * cols + start + c * w->step];
      double x = v.data[r * w->width + c];
      dst = add ? round_f32(dst + x) : x;
    }
}

// A buffer read versions back: a write starts a new version, as the timing simulator counts them
// (sim/timeline.cpp), when it writes the whole tile or columns the latest version already has;
// a window of columns it lacks joins it. The version replaced stays readable in its own copy.
void Runner::new_version(int buf, const lower::Window* w, bool add) {
  TS_CHECK(!add, "{} is read versions back but accumulated into", p_.buffers[buf].name);
  std::vector<bool>& cov = covered_[buf];
  const std::int64_t cols = bufs_[buf].shape.empty() ? 1 : bufs_[buf].shape.back();
  std::int64_t begin = 0, end = cols;
  if (w && !w->whole()) begin = w->start(iter_), end = begin + w->width;
  bool fresh = cov.empty() || (begin == 0 && end == cols);
  for (std::int64_t c = begin; c < end && !fresh; ++c) fresh = cov[static_cast<std::size_t>(c)];
  if (fresh) {
    past_[buf].push_front(bufs_[buf]);
    if (static_cast<int>(past_[buf].size()) >= p_.buffers[buf].bufs) past_[buf].pop_back();
    cov.assign(static_cast<std::size_t>(cols), false);
  }
  for (std::int64_t c = begin; c < end; ++c) cov[static_cast<std::size_t>(c)] = true;
}

std::string Runner::what(int i) const {
  const Inst& in = p_.insts[i];
  std::string s = fmt::format("instruction {} ({}", i, in.spec->op.name);
  if (!in.note.empty()) s += ": " + in.note;
  return s + ")";
}

// Iterations [first, last) of block b (last -1: all of them).
void Runner::walk(int b, std::int64_t first, std::int64_t last) {
  const lower::Block& blk = p_.blocks[b];
  if (last < 0) last = blk.trips;
  ran_[b] = first;  // (another core's share ran the iterations before `first`)
  for (std::int64_t t = first; t < last; ++t) {
    iter_[b] = t;
    if (blk.guard && !blk.guard->holds(iter_)) continue;  // a skipped tile: nothing runs
    for (const auto& item : blk.items) {
      if (item.block >= 0)
        walk(item.block);
      else if (p_.insts[item.inst].dma)
        dma(item.inst);
      else
        compute(item.inst);
    }
    ++ran_[b];
  }
  iter_[b] = 0;
}

// Several cores: each top-level item in turn on every core (the barrier after each loop), a
// loop as the core's share of its iterations (ceil(trips / cores) each, as the timing simulator
// splits them), on the core's own SBUF and PSUM; HBM is shared.
void Runner::run_cores() {
  const int cores = std::max(1, p_.cores);
  std::vector<int> on_chip;
  for (std::size_t b = 0; b < p_.buffers.size(); ++b)
    if (p_.buffers[b].memory != sem::Memory::Hbm) on_chip.push_back(static_cast<int>(b));
  std::vector<std::vector<ir::Tensor>> chip(static_cast<std::size_t>(cores));
  for (auto& c : chip)
    for (int b : on_chip) c.push_back(bufs_[b]);
  for (const auto& item : p_.blocks[0].items)
    for (int k = 0; k < cores; ++k) {
      std::vector<ir::Tensor>& mine = chip[static_cast<std::size_t>(k)];
      for (std::size_t j = 0; j < on_chip.size(); ++j) std::swap(bufs_[on_chip[j]], mine[j]);
      if (item.block >= 0) {
        std::int64_t trips = p_.blocks[item.block].trips, share = (trips + cores - 1) / cores;
        walk(item.block, std::min(trips, k * share), std::min(trips, (k + 1) * share));
      } else if (p_.insts[item.inst].dma) {
        dma(item.inst);
      } else {
        compute(item.inst);
      }
      for (std::size_t j = 0; j < on_chip.size(); ++j) std::swap(bufs_[on_chip[j]], mine[j]);
    }
}

// Copies between the affine HBM region and the tile (the on-chip window): along each buffer dim d
// the region takes `extent[d]` elements `stride[d]` apart from start(d) (a repeated dim: each
// element `repeat[d]` times, Access::index); the buffer dims feeding
// one tile dim split its index row-major (outer dim first); tile dims no buffer dim feeds repeat
// the data. An alias reads its root's storage row-major in its own shape.
void Runner::dma(int i) {
  const Inst& in = p_.insts[i];
  const Access& a = in.hbm;
  ir::Tensor& hbm = bufs_[root(a.buffer)];
  const auto& hshape = p_.buffers[a.buffer].shape;
  const lower::Window* win =
      in.store ? (in.in_window.empty() ? nullptr : &in.in_window[0]) : &in.out_window;
  int tile_buf = in.store ? in.in[0] : in.out;
  ir::Tensor tile = read(tile_buf, win, in.store ? in.lag(0) : 0);
  const auto& ts = tile.shape;
  const std::size_t rank = hshape.size();
  std::vector<std::int64_t> start(rank), stride(rank, 1), fed(ts.size(), 1);
  std::vector<bool> feeds(ts.size(), false);
  for (std::size_t d = rank; d-- > 0;) {
    if (d + 1 < rank) stride[d] = stride[d + 1] * hshape[d + 1];
    start[d] = a.start(d, iter_);
    int td = a.tile_dim[d];
    if (td >= 0 && td < static_cast<int>(ts.size())) fed[td] *= a.extent[d], feeds[td] = true;
    std::int64_t first = a.index(d, iter_, 0), last = a.index(d, iter_, a.extent[d] - 1);
    if (td < 0 ? a.extent[d] != 1 : (td >= static_cast<int>(ts.size()) || fed[td] > ts[td]))
      throw InternalError(fmt::format(
          "{}: the access to {} (dim {}, extent {}, tile dim {}) does not fit the tile {}", what(i),
          p_.buffers[a.buffer].name, d, a.extent[d], td, shape_str(ts)));
    if (std::min(first, last) < 0 || std::max(first, last) >= hshape[d])
      throw InternalError(
          fmt::format("{}: the access to {} dim {} reaches [{}, {}], outside its size {}", what(i),
                      p_.buffers[a.buffer].name, d, first, last, hshape[d]));
  }
  std::vector<std::int64_t> t(ts.size(), 0), rest(ts.size());
  for (std::int64_t flat = 0; flat < tile.size(); ++flat) {
    std::int64_t h = 0;
    bool inside = true;
    rest = t;
    for (std::size_t d = rank;
         d-- > 0;) {  // inner dims first: they take the low part of a merged index
      std::int64_t off = 0;
      if (int td = a.tile_dim[d]; td >= 0) {
        off = rest[td] % a.extent[d];
        rest[td] /= a.extent[d];
      }
      h += (a.repeats(d) > 1 ? a.index(d, iter_, off) : start[d] + off * a.step(d)) * stride[d];
    }
    for (std::size_t k = 0; k < ts.size(); ++k) inside = inside && (!feeds[k] || rest[k] == 0);
    if (inside) {
      if (in.store)
        hbm.data[h] = tile.data[flat];
      else
        tile.data[flat] = hbm.data[h];
    }
    for (std::size_t k = ts.size(); k-- > 0;) {
      if (++t[k] < ts[k]) break;
      t[k] = 0;
    }
  }
  if (!in.store) write(tile_buf, win, std::move(tile), false);
}

// A one-node kernel applying the instruction to parameters shaped like its operand tiles (at
// this iteration, for an instruction whose attribute moves with the loops).
const ir::Kernel& Runner::kernel(int i) {
  if (kernels_[i]) return *kernels_[i];
  const Inst& in = p_.insts[i];
  const sem::OpSpec& op = in.spec->op;
  if (in.in.size() != op.operands.size())
    throw InternalError(fmt::format("{} has {} operands, the instruction takes {}", what(i),
                                    in.in.size(), op.operands.size()));
  ir::Kernel k;
  k.name = op.name;
  std::vector<int> args;
  for (std::size_t j = 0; j < in.in.size(); ++j) {
    const lower::Buffer& b = p_.buffers[in.in[j]];
    ir::Param prm;
    prm.name = op.operands[j];
    prm.dtype = b.dtype;
    for (auto d : b.shape) prm.shape.push_back(sem::Dim(d));
    if (j < in.in_window.size() && !in.in_window[j].whole())
      prm.shape.back() = sem::Dim(in.in_window[j].width);
    prm.scalar = prm.shape.empty();
    ir::Node n;
    n.op = "input";
    n.shape = prm.shape;
    n.dtype = b.dtype;
    n.param = static_cast<int>(j);
    n.label = prm.name;
    prm.node = static_cast<int>(k.nodes.size());
    args.push_back(prm.node);
    k.nodes.push_back(std::move(n));
    k.params.push_back(std::move(prm));
  }
  // An attribute that moves with the loops (a mask's offset): its value at this iteration.
  sem::AttrMap attrs = in.attrs;
  if (!in.moving_attr.empty()) {
    auto& v = attrs.at(in.moving_attr);
    std::int64_t at = std::get<std::int64_t>(v);
    for (const auto& [block, step] : in.moving) at += iter_.at(block) * step;
    v = at;
  }
  try {
    k.outputs = {ir::add_op(k, op, args, attrs, SourceLoc{})};
  } catch (const UserError& e) {
    throw InternalError(fmt::format("{}: its operands do not fit: {}", what(i), e.message()));
  }
  kernels_[i] = std::move(k);
  return *kernels_[i];
}

void Runner::compute(int i) {
  const Inst& in = p_.insts[i];
  if (!in.moving_attr.empty()) kernels_[i].reset();  // its attribute differs per iteration
  std::vector<ir::Tensor> args;
  for (std::size_t j = 0; j < in.in.size(); ++j)
    args.push_back(read(in.in[j], j < in.in_window.size() ? &in.in_window[j] : nullptr, in.lag(j)));
  ir::Tensor r;
  try {
    r = std::move(ir::evaluate(kernel(i), {}, args, ir::Precision::F32).at(0));
  } catch (const UserError& e) {
    throw InternalError(fmt::format("{}: {}", what(i), e.message()));
  }
  std::vector<std::int64_t> out_shape = bufs_[in.out].shape;
  if (!in.out_window.whole()) out_shape.back() = in.out_window.width;
  if (r.shape != out_shape)
    throw InternalError(fmt::format("{} computes a {} tile, but its output {} is {}", what(i),
                                    r.shape_str(), p_.buffers[in.out].name, shape_str(out_shape)));
  write(in.out, &in.out_window, std::move(r),
        in.accumulate_block >= 0 && ran_.at(in.accumulate_block) > 0);
}

std::vector<ir::Tensor> Runner::outputs() const {
  std::map<int, int> by_index;
  for (std::size_t b = 0; b < p_.buffers.size(); ++b)
    if (p_.buffers[b].output >= 0) by_index[p_.buffers[b].output] = static_cast<int>(b);
  std::vector<ir::Tensor> out;
  for (const auto& [index, b] : by_index) {
    TS_CHECK(index == static_cast<int>(out.size()), "program '{}' has no buffer for output {}",
             p_.kernel, out.size());
    out.push_back(bufs_[root(b)]);
    out.back().shape = p_.buffers[b].shape;
  }
  return out;
}

}  // namespace

std::vector<ir::Tensor> execute(const lower::Program& p, const std::vector<ir::Tensor>& inputs) {
  Runner r(p, inputs);
  if (p.cores > 1)
    r.run_cores();
  else
    r.walk(0);
  return r.outputs();
}

}  // namespace ts::sim

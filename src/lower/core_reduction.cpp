#include "tilesweep/lower/core_reduction.h"

#include <fmt/format.h>

#include <algorithm>

#include "tilesweep/lower/core_split.h"
#include "tilesweep/lower/reduction_fusion.h"
#include "tilesweep/target/instr_cost.h"

namespace ts::lower {

namespace {

// The instructions of block b and the blocks inside it, in program order.
void instructions_of(const Program& p, int b, std::vector<int>& out) {
  for (const Item& item : p.blocks[static_cast<std::size_t>(b)].items)
    if (item.inst >= 0)
      out.push_back(item.inst);
    else
      instructions_of(p, item.block, out);
}

// The top-level loops of p.
std::vector<int> top_loops(const Program& p) {
  std::vector<int> loops;
  for (const Item& item : p.blocks[0].items)
    if (item.block >= 0) loops.push_back(item.block);
  return loops;
}

// The reduced buffers of top-level loop `b`: accumulated over it, or written by a fold in it.
std::set<int> reduced_in(const Program& p, int b) {
  std::vector<int> insts;
  instructions_of(p, b, insts);
  std::set<int> reduced;
  for (int i : insts) {
    const Inst& in = p.insts[static_cast<std::size_t>(i)];
    if ((in.accumulate_block == b || in.fold) && in.out >= 0) reduced.insert(in.out);
  }
  return reduced;
}

bool no_terms(const Window& w) { return w.terms.empty(); }

// The program rebuilt with the core loop (block 1) around top-level loop `loop`: block ids from
// 1 up shift by one, and every term of `loop` (iteration k of the core's share) also counts
// share x the core.
class Rebuild {
 public:
  Rebuild(int loop, std::int64_t share) : loop_(loop), share_(share) {}

  int block(int b) const { return b >= 1 ? b + 1 : b; }
  void terms(Terms& t) const {
    Terms out;
    for (const auto& [b, s] : t) {
      out.push_back({block(b), s});
      if (b == loop_) out.push_back({1, s * share_});
    }
    t = std::move(out);
  }
  void inst(Inst& in) const {
    for (auto& t : in.hbm.terms) terms(t);
    for (auto& w : in.in_window) terms(w.terms);
    terms(in.out_window.terms);
    terms(in.moving);
    if (in.accumulate_block >= 0) in.accumulate_block = block(in.accumulate_block);
  }

 private:
  int loop_;
  std::int64_t share_;
};

struct Builder {
  Program& q;
  const target::Target& t;

  Lowered<const sem::InstrSpec*> spec(const char* name) const {
    const sem::InstrSpec* s = t.isa.find(name);
    if (!s) return NoProgram{fmt::format("target '{}' has no '{}' instruction", t.name, name)};
    return s;
  }

  int buffer(std::string name, sem::Memory m, ir::DType dt, std::vector<std::int64_t> shape,
             int bufs, int nest) {
    Buffer b;
    b.name = std::move(name) + std::to_string(q.buffers.size());
    b.memory = m;
    b.dtype = dt;
    b.shape = std::move(shape);
    b.bufs = bufs;
    b.nest = nest;
    q.buffers.push_back(std::move(b));
    return static_cast<int>(q.buffers.size()) - 1;
  }

  int place(int block, Inst in) {
    q.insts.push_back(std::move(in));
    int id = static_cast<int>(q.insts.size()) - 1;
    q.blocks[static_cast<std::size_t>(block)].items.push_back({id, -1});
    return id;
  }

  Inst make(const sem::InstrSpec* s, const std::vector<target::TileShape>& operands,
            const std::vector<std::int64_t>& out, ir::DType dt) const {
    Inst in;
    in.spec = s;
    in.engine = s->engines.front();
    auto v = target::instr_vars(t, *s, {operands.data(), operands.size()}, out, dt);
    in.vars = v.vars;
    in.repeat = v.repeat;
    return in;
  }

  // A DMA between tile columns `w` of `tile` ([P, W]) and partials[core or 1 + r][:, :].
  Inst dma(const sem::InstrSpec* s, int partials, int tile, const Window& w, std::int64_t width,
           bool store, int block, std::int64_t offset) const {
    const Buffer& b = q.buffers[static_cast<std::size_t>(tile)];
    std::vector<std::int64_t> shape = {b.shape[0], width};
    Inst in = make(s, {target::TileShape(shape.begin(), shape.end())}, shape, b.dtype);
    in.dma = true;
    in.store = store;
    in.hbm.buffer = partials;
    in.hbm.extent = {1, shape[0], width};
    in.hbm.terms = {Terms{{block, 1}}, Terms{}, Terms{}};
    in.hbm.tile_dim = {-1, 0, 1};
    in.hbm.offset = {offset, 0, 0};
    in.hbm.stride = {1, 1, 1};
    if (store) {
      in.in = {tile};
      in.in_window = {w};
    } else {
      in.out = tile;
      in.out_window = w;
    }
    return in;
  }
};

}  // namespace

std::set<int> core_reduced(const Program& p) {
  std::set<int> all;
  for (int b : top_loops(p)) all.merge(reduced_in(p, b));
  return all;
}

Lowered<Program> with_core_reduction(const Program& p, int cores, const target::Target& t) {
  auto refuse = [](std::string why) { return NoProgram{"not split over cores: " + why}; };
  std::vector<int> loops = top_loops(p);
  if (loops.size() != 1)
    return refuse(fmt::format(
        "a cross-core reduction is generated for a program of one top-level loop; it has {}",
        loops.size()));
  const int loop = loops[0];
  const Block& lb = p.blocks[static_cast<std::size_t>(loop)];
  if (lb.guard) return refuse(fmt::format("its accumulating loop '{}' is guarded", lb.var));
  if (lb.trips % cores != 0)
    return refuse(
        fmt::format("its loop '{}' reduces over {} iterations, which do not divide over "
                    "{} cores",
                    lb.var, lb.trips, cores));
  const std::set<int> reduced = reduced_in(p, loop);
  if (reduced.empty()) return refuse(fmt::format("its loop '{}' carries no reduction", lb.var));
  if (auto why = core_split_conflict(p, reduced)) return refuse(*why);

  // What the loop's instructions do with the reduced buffers: accumulators written only by
  // their accumulation, running statistics read only by their folds, each with one writer of
  // its partial column (a constant window).
  std::vector<int> insts;
  instructions_of(p, loop, insts);
  std::set<int> written;
  for (int i : insts)
    if (int o = p.insts[static_cast<std::size_t>(i)].out; o >= 0) written.insert(o);
  std::vector<int> accumulators, running, folds;
  std::vector<Window> slot, value;  // per running statistic: its partial's columns, its value's
  for (int i : insts) {
    const Inst& in = p.insts[static_cast<std::size_t>(i)];
    if (in.fold) {
      for (std::size_t j = 0; j < in.in.size(); ++j)
        if (written.count(in.in[j]) && !reduced.count(in.in[j]))
          return refuse(fmt::format("the fold of {} reads a value of the loop's iteration",
                                    p.buffers[in.out].name));
      if (!std::all_of(in.in_window.begin(), in.in_window.end(), no_terms) ||
          !no_terms(in.out_window))
        return refuse("a fold's columns move with the loops");
      folds.push_back(i);
      continue;
    }
    for (int r : in.in)
      if (reduced.count(r))
        return refuse(fmt::format("its loop '{}' reads the running {} outside its fold", lb.var,
                                  p.buffers[r].name));
    if (in.out < 0 || !reduced.count(in.out)) continue;
    const Buffer& out = p.buffers[static_cast<std::size_t>(in.out)];
    if (in.accumulate_block == loop) {
      if (out.memory != sem::Memory::Psum || !in.out_window.whole())
        return refuse(fmt::format("{} accumulates outside a whole PSUM tile", out.name));
      if (std::find(accumulators.begin(), accumulators.end(), in.out) == accumulators.end())
        accumulators.push_back(in.out);
      continue;
    }
    if (in.accumulate_block >= 0 || !no_terms(in.out_window) ||
        std::find(running.begin(), running.end(), in.out) != running.end() ||
        std::find(accumulators.begin(), accumulators.end(), in.out) != accumulators.end())
      return refuse(fmt::format("{} is written otherwise than by a reduction", out.name));
    running.push_back(in.out);
    slot.push_back(in.out_window);
  }
  for (std::size_t j = 0; j < running.size(); ++j) {
    // The running value: the columns the last fold writing it writes, as wide as the partial's.
    std::optional<Window> v;
    for (int i : folds)
      if (p.insts[static_cast<std::size_t>(i)].out == running[j])
        v = p.insts[static_cast<std::size_t>(i)].out_window;
    const Buffer& b = p.buffers[static_cast<std::size_t>(running[j])];
    auto width = [&](const Window& w) { return w.whole() ? b.shape.back() : w.width; };
    if (!v || width(*v) != width(slot[j]) || v->step != 1 || slot[j].step != 1 || v->repeat != 1 ||
        slot[j].repeat != 1)
      return refuse(fmt::format("{} has no fold of its partial into its value", b.name));
    value.push_back(*v);
  }
  if (accumulators.empty() && running.empty())
    return refuse(fmt::format("its loop '{}' carries no reduction", lb.var));

  // The rebuilt program: block 1 the core loop, then p's blocks (shifted), the combine, its loop.
  const std::int64_t share = lb.trips / cores;
  Rebuild re(loop, share);
  Program q;
  q.kernel = p.kernel;
  q.buffers = p.buffers;
  q.cores = cores;
  q.config = p.config;
  q.psum_copy_vector = p.psum_copy_vector;
  q.psum_copy_scalar = p.psum_copy_scalar;
  q.insts = p.insts;
  for (Inst& in : q.insts) re.inst(in);
  q.blocks.resize(p.blocks.size() + 3);
  for (std::size_t b = 1; b < p.blocks.size(); ++b) {
    Block& nb = q.blocks[b + 1];
    nb = p.blocks[b];
    nb.parent = static_cast<int>(b) == loop ? 1 : re.block(nb.parent);
    for (Item& item : nb.items)
      if (item.block >= 0) item.block = re.block(item.block);
    if (nb.guard) re.terms(nb.guard->terms);
  }
  q.blocks[static_cast<std::size_t>(re.block(loop))].trips = share;
  const int core = 1, combine = static_cast<int>(p.blocks.size()) + 1, r = combine + 1;
  q.blocks[core] = Block{"core", cores, 0, {{-1, re.block(loop)}}, std::nullopt};
  q.blocks[static_cast<std::size_t>(combine)] = Block{"combine", 1, 0, {}, std::nullopt};
  q.blocks[static_cast<std::size_t>(r)] =
      Block{"r", cores - 1, combine, {}, std::nullopt};  // the other cores' partials
  q.blocks[static_cast<std::size_t>(combine)].items.push_back({-1, r});  // then the rest
  // The instructions before the loop run on every core, except a running statistic's start,
  // which runs in the core loop (each core's share, and the core loop run in order on one core,
  // start from the identity); those after it run in the combine, on core 0.
  std::vector<Item> pre, post, start;
  bool after = false;
  for (const Item& item : p.blocks[0].items) {
    if (item.block == loop) {
      after = true;
      continue;
    }
    const int out = item.inst >= 0 ? p.insts[static_cast<std::size_t>(item.inst)].out : -1;
    if (!after && std::find(running.begin(), running.end(), out) != running.end())
      start.push_back(item);
    else
      (after ? post : pre).push_back(item);
  }
  q.blocks[0].items = pre;
  q.blocks[0].items.push_back({-1, core});
  q.blocks[0].items.push_back({-1, combine});
  q.blocks[core].items.insert(q.blocks[core].items.begin(), start.begin(), start.end());

  Builder make{q, t};
  auto dma = make.spec("dma_copy");
  auto copy = make.spec("tensor_copy");
  auto add = make.spec("tensor_tensor");
  for (const auto* s : {&dma, &copy, &add})
    if (!*s) return refuse(s->no_program().reason);
  std::vector<Item> first;  // the combine's loads of core 0's partials, before the loop over r
  // Per accumulator: evacuated to SBUF and stored by every core; on core 0 the cores' partials
  // loaded and added in core order into an SBUF tile, which the instructions after the loop read
  // in the accumulator's place.
  for (int a : accumulators) {
    const Buffer acc = q.buffers[static_cast<std::size_t>(a)];
    const std::vector<std::int64_t> shape = acc.shape;
    const target::TileShape tile(shape.begin(), shape.end());
    for (const Item& item : post) {
      const Inst& in = q.insts[static_cast<std::size_t>(item.inst)];
      for (std::size_t j = 0; j < in.in.size(); ++j)
        if (in.in[j] == a && !in.in_window.empty() && !in.in_window[j].whole())
          return refuse(fmt::format("an instruction after the loop reads columns of {}", acc.name));
        else if (in.in[j] == a && j < in.spec->operand_memory.size() &&
                 !in.spec->operand_memory[j].empty() &&
                 std::find(in.spec->operand_memory[j].begin(), in.spec->operand_memory[j].end(),
                           sem::Memory::Sbuf) == in.spec->operand_memory[j].end())
          return refuse(fmt::format("{} reads {} from PSUM only", in.spec->op.name, acc.name));
    }
    int partials =
        make.buffer("partials", sem::Memory::Hbm, acc.dtype, {cores, shape[0], shape[1]}, 1, -1);
    int ev = make.buffer("partial", sem::Memory::Sbuf, acc.dtype, shape, 1, acc.nest);
    Inst out = make.make(*copy, {tile}, shape, acc.dtype);
    out.in = {a};
    out.out = ev;
    out.note = fmt::format("this core's partial {}", acc.name);
    make.place(core, std::move(out));
    Inst st = make.dma(*dma, partials, ev, {}, shape[1], true, core, 0);
    st.note = fmt::format("store this core's partial {}", acc.name);
    make.place(core, std::move(st));
    int total = make.buffer("total", sem::Memory::Sbuf, acc.dtype, shape, 1, acc.nest);
    Inst ld0 = make.dma(*dma, partials, total, {}, shape[1], false, r, 0);
    ld0.hbm.terms[0].clear();  // core 0's
    ld0.note = fmt::format("load core 0's partial {}", acc.name);
    q.insts.push_back(std::move(ld0));
    first.push_back({static_cast<int>(q.insts.size()) - 1, -1});
    // A copy per other core: their loads all in flight at once, the adds one after another.
    int other = make.buffer("other", sem::Memory::Sbuf, acc.dtype, shape, cores - 1, acc.nest);
    Inst ld = make.dma(*dma, partials, other, {}, shape[1], false, r, 1);
    ld.note = fmt::format("load core r + 1's partial {}", acc.name);
    make.place(r, std::move(ld));
    Inst sum = make.make(*add, {tile, tile}, shape, acc.dtype);
    sum.in = {total, other};
    sum.out = total;
    sum.attrs = {{"op", std::string("add")}};
    sum.note = fmt::format("total of {} += core r + 1's partial", acc.name);
    make.place(r, std::move(sum));
    for (const Item& item : post)
      for (int& b : q.insts[static_cast<std::size_t>(item.inst)].in)
        if (b == a) b = total;
  }
  // Per running statistic: its value stored by every core; on core 0 core 0's loaded into the
  // value's columns, then each other core's into the partial's columns and folded in by the fold.
  for (std::size_t j = 0; j < running.size(); ++j) {
    const Buffer run = q.buffers[static_cast<std::size_t>(running[j])];
    std::int64_t width = value[j].whole() ? run.shape.back() : value[j].width;
    int partials =
        make.buffer("partials", sem::Memory::Hbm, run.dtype, {cores, run.shape[0], width}, 1, -1);
    Inst st = make.dma(*dma, partials, running[j], value[j], width, true, core, 0);
    st.note = fmt::format("store this core's running {}", run.name);
    make.place(core, std::move(st));
    Inst ld0 = make.dma(*dma, partials, running[j], value[j], width, false, r, 0);
    ld0.hbm.terms[0].clear();  // core 0's
    ld0.note = fmt::format("load core 0's running {}", run.name);
    q.insts.push_back(std::move(ld0));
    first.push_back({static_cast<int>(q.insts.size()) - 1, -1});
    Inst ld = make.dma(*dma, partials, running[j], slot[j], width, false, r, 1);
    ld.note = fmt::format("load core r + 1's running {}", run.name);
    make.place(r, std::move(ld));
  }
  if (!running.empty())
    for (int i : folds) make.place(r, q.insts[static_cast<std::size_t>(i)]);
  std::vector<Item>& items = q.blocks[static_cast<std::size_t>(combine)].items;
  items.insert(items.begin(), first.begin(), first.end());
  items.insert(items.end(), post.begin(), post.end());
  // The fusions again on the rebuilt blocks (the folds copied, operands rewired); none where `p`
  // was built without them.
  if (riders(p) > 0) fuse_reductions(q, t);
  validate(q);
  return q;
}

}  // namespace ts::lower

// Software pipelining of a loop (software_pipeline.h): the legality checks over what the two
// stages read and write, then the rewrite (prologue and epilogue copies, the steady state's
// first stage shifted one iteration ahead, its later stage reading the previous copies).
#include "tilesweep/lower/software_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace ts::lower {

namespace {

// One stage: its instructions (with the loops between the pipelined loop and them) and what it
// reads and writes.
struct Stage {
  std::vector<int> insts;
  std::map<int, std::vector<int>> loops_of;  // instruction -> the loops inside the stage around it
  std::set<int> blocks;                      // the loops inside the stage
  std::set<int> reads, writes;               // on-chip buffers
  std::set<int> loads, stores;               // HBM tensors (alias roots)
};

int root(const Program& p, int b) {
  return p.buffers[b].alias >= 0 ? root(p, p.buffers[b].alias) : b;
}

void collect(const Program& p, const Item& item, std::vector<int>& loops, Stage& s) {
  if (item.block >= 0) {
    s.blocks.insert(item.block);
    loops.push_back(item.block);
    for (const Item& inner : p.blocks[item.block].items) collect(p, inner, loops, s);
    loops.pop_back();
    return;
  }
  const Inst& in = p.insts[item.inst];
  s.insts.push_back(item.inst);
  s.loops_of[item.inst] = loops;
  s.reads.insert(in.in.begin(), in.in.end());
  if (in.out >= 0) s.writes.insert(in.out);
  if (in.dma) (in.store ? s.stores : s.loads).insert(root(p, in.hbm.buffer));
}

Stage stage(const Program& p, int block, std::size_t begin, std::size_t end) {
  Stage s;
  std::vector<int> loops;
  for (std::size_t i = begin; i < end; ++i) collect(p, p.blocks[block].items[i], loops, s);
  return s;
}

bool meets(const std::set<int>& a, const std::set<int>& b) {
  return std::any_of(a.begin(), a.end(), [&](int x) { return b.count(x) > 0; });
}

// Whether instruction `w` of stage A starts exactly one version of its output per iteration of
// the pipelined loop (the timing simulator's count, sim/timeline.cpp): a whole-tile write outside
// any loop of the stage, or a window per trip of the loops around it that together cover the
// tile once (each trip's window misses the earlier ones: the first starts the version, the
// others join it).
std::optional<std::string> one_version(const Program& p, const Stage& a, int w) {
  const Inst& in = p.insts[w];
  const std::string what = fmt::format("{} ({})", p.buffers[in.out].name, in.spec->op.name);
  if (in.accumulate_block >= 0) return what + " is accumulated";
  if (std::find(in.in.begin(), in.in.end(), in.out) != in.in.end())
    return what + " is written in place";
  const std::vector<int>& loops = a.loops_of.at(w);
  if (in.out_window.whole()) {
    if (!loops.empty()) return what + " is written whole in a loop";
    return std::nullopt;
  }
  if (in.dma) return what + " is loaded in windows (a version each)";
  for (int l : loops)
    if (p.blocks[l].guard) return what + " is written in a guarded loop";
  for (const auto& [b, s] : in.out_window.terms)
    if (s != 0 && std::find(loops.begin(), loops.end(), b) == loops.end())
      return what + "'s window moves with a loop outside the stage";
  // Every trip's window, in order: each must miss the ones before, and all must cover the tile.
  std::vector<std::int64_t> iter(p.blocks.size(), 0);
  std::vector<std::pair<std::int64_t, std::int64_t>> seen;
  const std::int64_t cols = p.buffers[in.out].shape.back();
  std::int64_t total = 0;
  for (;;) {
    std::int64_t begin = in.out_window.start(iter), end = begin + in.out_window.width;
    for (const auto& [b0, e0] : seen)
      if (begin < e0 && b0 < end) return what + "'s windows overlap within an iteration";
    seen.emplace_back(begin, end);
    total += end - begin;
    std::size_t d = loops.size();
    while (d > 0 && ++iter[loops[d - 1]] == p.blocks[loops[d - 1]].trips) iter[loops[--d]] = 0;
    if (d == 0) break;
    if (total > cols) break;
  }
  if (total != cols) return what + "'s windows do not cover it once per iteration";
  return std::nullopt;
}

// Loop `block`'s variable takes `value` (`keep` false: the terms on it become a constant) or
// moves `value` iterations ahead (`keep` true).
struct Shift {
  int block = -1;
  std::int64_t value = 0;
  bool keep = true;
  std::map<int, int> blocks;  // a cloned loop inside the stage -> its clone

  void apply(Terms& terms, std::int64_t& offset) const {
    Terms out;
    for (auto [b, s] : terms) {
      if (b == block) {
        offset += value * s;
        if (!keep) continue;
      }
      auto it = blocks.find(b);
      out.push_back({it == blocks.end() ? b : it->second, s});
    }
    terms = std::move(out);
  }
  void apply(Window& w) const { apply(w.terms, w.offset); }
  void apply(Access& a) const {
    if (a.offset.empty()) a.offset.assign(a.terms.size(), 0);
    for (std::size_t d = 0; d < a.terms.size(); ++d)
      apply(a.terms[d], a.offset[d]);  // (a repeated dim's too: its start counts repeated elements)
  }
  void apply(Inst& in) const {
    apply(in.out_window);
    for (auto& w : in.in_window) apply(w);
    if (in.dma) apply(in.hbm);
    if (!in.moving_attr.empty()) {
      std::int64_t at = std::get<std::int64_t>(in.attrs.at(in.moving_attr));
      apply(in.moving, at);
      in.attrs[in.moving_attr] = at;
    }
    if (auto it = blocks.find(in.accumulate_block); it != blocks.end())
      in.accumulate_block = it->second;
  }
};

// Copies `item` (an instruction or a loop with everything in it) into block `into`, shifted.
Item clone(Program& p, const Item& item, int into, Shift& shift) {
  if (item.inst >= 0) {
    Inst in = p.insts[item.inst];
    in.in_lag.clear();
    shift.apply(in);
    p.insts.push_back(std::move(in));
    return Item{static_cast<int>(p.insts.size()) - 1, -1};
  }
  Block copy = p.blocks[item.block];
  copy.parent = into;
  copy.items.clear();
  int id = static_cast<int>(p.blocks.size());
  shift.blocks[item.block] = id;
  if (copy.guard) shift.apply(copy.guard->terms, copy.guard->offset);
  p.blocks.push_back(std::move(copy));
  std::vector<Item> items = p.blocks[item.block].items;
  for (const Item& inner : items) {
    Item c = clone(p, inner, id, shift);
    p.blocks[id].items.push_back(c);
  }
  return Item{-1, id};
}

// Shifts the stage's items in place (their loops keep their ids).
void shift_in_place(Program& p, const Item& item, const Shift& shift) {
  if (item.inst >= 0) return shift.apply(p.insts[item.inst]);
  Block& blk = p.blocks[item.block];
  if (blk.guard) shift.apply(blk.guard->terms, blk.guard->offset);
  std::vector<Item> items = blk.items;
  for (const Item& inner : items) shift_in_place(p, inner, shift);
}

// The buffers the later stage may take a copy of its own (B writes them and A reads or writes
// them): B's first touch of the buffer writes it whole at B's top level (not accumulated, not in
// place), so B reads only its own value; and nothing outside the loop touches it. A buffer that
// buffer_reuse.cpp gave to one value of each stage (gqa's scaled q in A, the output tile in B)
// is such a buffer: with a copy for B the stages no longer share it.
std::set<int> own_in_later(const Program& p, const Stage& a, const Stage& b) {
  std::set<int> own;
  for (int x : b.writes) {
    if (!a.writes.count(x) && !a.reads.count(x)) continue;
    for (int i : b.insts) {
      const Inst& in = p.insts[i];
      bool reads = std::find(in.in.begin(), in.in.end(), x) != in.in.end();
      if (!reads && in.out != x) continue;
      if (!reads && in.out == x && in.out_window.whole() && in.accumulate_block < 0 &&
          b.loops_of.at(i).empty())
        own.insert(x);
      break;
    }
  }
  if (own.empty()) return own;
  std::set<int> body(a.insts.begin(), a.insts.end());
  body.insert(b.insts.begin(), b.insts.end());
  for (std::size_t i = 0; i < p.insts.size(); ++i) {
    if (body.count(static_cast<int>(i))) continue;
    const Inst& in = p.insts[i];
    own.erase(in.out);
    for (int x : in.in) own.erase(x);
  }
  return own;
}

std::optional<std::string> refusal(const Program& p, int block, std::size_t split, const Stage& a,
                                   Stage b, std::set<int>& handoff) {
  for (int x : own_in_later(p, a, b)) {  // (B's copy: not shared with A)
    b.writes.erase(x);
    b.reads.erase(x);
  }
  const Block& loop = p.blocks[block];
  if (block <= 0 || loop.parent <= 0) return "not a loop inside another loop";
  if (loop.trips < 2) return fmt::format("{} trip", loop.trips);
  if (loop.guard) return "the loop is guarded";
  if (split == 0 || split >= loop.items.size()) return "a stage is empty";
  for (const Stage* s : {&a, static_cast<const Stage*>(&b)})
    for (int i : s->insts) {
      int acc = p.insts[i].accumulate_block;
      if (acc >= 0 && s->blocks.count(acc) == 0) return "an accumulation across iterations";
    }
  if (meets(b.writes, a.reads) || meets(b.writes, a.writes))
    return "the later stage writes what the first reads or writes";
  if (meets(b.stores, a.loads) || meets(b.stores, a.stores) || meets(a.stores, b.loads))
    return "the stages share an HBM tensor one of them stores";
  for (int x : a.writes)
    if (b.reads.count(x)) handoff.insert(x);
  for (int x : handoff) {
    int writer = -1;
    for (int i : a.insts)
      if (p.insts[i].out == x) {
        if (writer >= 0) return p.buffers[x].name + " has two writers";
        writer = i;
      }
    if (auto no = one_version(p, a, writer)) return no;
  }
  return std::nullopt;
}

void set_lags(Program& p, const Stage& b, const std::set<int>& handoff) {
  for (int i : b.insts) {
    Inst& in = p.insts[i];
    for (std::size_t j = 0; j < in.in.size(); ++j)
      if (handoff.count(in.in[j])) {
        if (in.in_lag.empty()) in.in_lag.assign(in.in.size(), 0);
        in.in_lag[j] = 1;
      }
  }
}

// Whether pipeline_loop accepts the split (nullopt: it refuses), and whether some tile A hands
// over is read in B off the Tensor engine (the softmax of the scores A's matmuls computed). A
// split whose hand-over only feeds B's matmuls (trn1's gqa: q^T transposed on the PE and copied
// out of PSUM ahead of the score matmuls) overlaps only that copy with the matmuls.
std::optional<bool> off_tensor_split(const Program& p, int block, std::size_t split) {
  const std::size_t items = p.blocks[block].items.size();
  Stage a = stage(p, block, 0, std::min(split, items)), b = stage(p, block, split, items);
  std::set<int> handoff;
  if (refusal(p, block, split, a, b, handoff)) return std::nullopt;
  return std::any_of(b.insts.begin(), b.insts.end(), [&](int i) {
    const Inst& in = p.insts[i];
    return in.engine != sem::Engine::Tensor &&
           std::any_of(in.in.begin(), in.in.end(), [&](int x) { return handoff.count(x) > 0; });
  });
}

}  // namespace

std::optional<std::string> pipeline_loop(Program& p, int block, std::size_t split) {
  if (block <= 0 || block >= static_cast<int>(p.blocks.size())) return "no such loop";
  const std::size_t items = p.blocks[block].items.size();
  Stage a = stage(p, block, 0, std::min(split, items)), b = stage(p, block, split, items);
  std::set<int> handoff;
  if (auto no = refusal(p, block, split, a, b, handoff)) return no;
  for (int x : own_in_later(p, a, b)) {
    Buffer copy = p.buffers[x];
    copy.name += "b";
    p.buffers.push_back(std::move(copy));
    const int y = static_cast<int>(p.buffers.size()) - 1;
    for (int i : b.insts) {
      Inst& in = p.insts[i];
      if (in.out == x) in.out = y;
      std::replace(in.in.begin(), in.in.end(), x, y);
    }
  }
  b = stage(p, block, split, items);
  const std::int64_t n = p.blocks[block].trips;
  const int parent = p.blocks[block].parent;
  const std::vector<Item> body = p.blocks[block].items;
  std::vector<Item> prologue, epilogue;
  Shift first{block, 0, false, {}};
  for (std::size_t i = 0; i < split; ++i) prologue.push_back(clone(p, body[i], parent, first));
  Shift last{block, n - 1, false, {}};
  for (std::size_t i = split; i < body.size(); ++i)
    epilogue.push_back(clone(p, body[i], parent, last));
  Shift ahead{block, 1, true, {}};
  for (std::size_t i = 0; i < split; ++i) shift_in_place(p, body[i], ahead);
  set_lags(p, b, handoff);
  for (int x : handoff) {
    p.buffers[x].min_bufs = std::max(p.buffers[x].min_bufs, 2);
    p.buffers[x].bufs = std::max(p.buffers[x].bufs, 2);
  }
  p.blocks[block].trips = n - 1;
  auto& around = p.blocks[parent].items;
  auto at =
      std::find_if(around.begin(), around.end(), [&](const Item& it) { return it.block == block; });
  at = around.insert(at, prologue.begin(), prologue.end()) +
       static_cast<std::ptrdiff_t>(prologue.size()) + 1;
  around.insert(at, epilogue.begin(), epilogue.end());
  return std::nullopt;
}

std::optional<std::size_t> pipeline_split(const Program& p, int block) {
  const auto& items = p.blocks[block].items;
  std::set<int> psum;
  auto evacuates = [&](const Item& item) {
    Stage s;
    std::vector<int> loops;
    collect(p, item, loops, s);
    for (int i : s.insts) {
      const Inst& in = p.insts[i];
      if (in.out >= 0 && p.buffers[in.out].memory == sem::Memory::Psum) psum.insert(in.out);
    }
    for (int i : s.insts) {
      const Inst& in = p.insts[i];
      bool from_psum =
          std::any_of(in.in.begin(), in.in.end(), [&](int x) { return psum.count(x); });
      if (from_psum && in.out >= 0 && p.buffers[in.out].memory == sem::Memory::Sbuf) return true;
    }
    return false;
  };
  // The first evacuation the pipeliner accepts whose hand-over B reads off the Tensor engine
  // (trn1's gqa transposes q on the PE: that copy out of PSUM comes before the scores'), else
  // the first it accepts.
  std::optional<std::size_t> accepted;
  for (std::size_t i = 0; i + 1 < items.size(); ++i)
    if (evacuates(items[i])) {
      // The later stage must compute (an element-wise stage), not only store.
      Stage rest = stage(p, block, i + 1, items.size());
      bool computes =
          std::any_of(rest.insts.begin(), rest.insts.end(), [&](int j) { return !p.insts[j].dma; });
      if (!computes) break;
      std::optional<bool> off_tensor = off_tensor_split(p, block, i + 1);
      if (off_tensor && *off_tensor) return i + 1;
      if (off_tensor && !accepted) accepted = i + 1;
    }
  return accepted;
}

std::optional<int> loop_to_pipeline(const Program& p, int nest) {
  // The innermost loop with a split: deepest first, in program order.
  std::function<std::optional<int>(int)> visit = [&](int b) -> std::optional<int> {
    for (const Item& item : p.blocks[b].items)
      if (item.block >= 0)
        if (auto inner = visit(item.block)) return inner;
    if (pipeline_split(p, b)) return b;
    return std::nullopt;
  };
  return visit(nest);
}

bool pipelined(const Program& p) {
  return std::any_of(p.insts.begin(), p.insts.end(), [](const Inst& in) {
    return std::any_of(in.in_lag.begin(), in.in_lag.end(), [](int l) { return l > 0; });
  });
}

}  // namespace ts::lower

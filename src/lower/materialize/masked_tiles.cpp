// Fully masked key tiles skipped in whole-row nests (issue 22): a nest that keeps the masked row
// [P, row] on chip whole (one masked select, tile_skip.h's affine_select, over it) computes the
// select's operand and the probabilities' products in loops over column windows outside the
// select. A window the select's predicate fails on entirely (verify::prove_window_skip, Z3) is
// skipped where it is provably exact, by guarding the innermost loop around the instructions
// (Block::guard, the same guard the online nests use):
//   - Overwritten: the writers of the select's operand (the score matmul's evacuations): the
//     select's only reader of that buffer replaces the window by the fill, so what is there (stale
//     data of an earlier strip, nothing) is never read;
//   - ZeroFactor: an accumulating matmul (the P.V product) whose operand is, through data
//     movements (transposes, copies), a window of a value the kernel computes from the select's
//     output by an element-wise chain that turns the fill into 0 (exp(-inf - m) / l): a zero tile
//     is the identity of the accumulation;
//   - dead: an instruction whose output window only skipped instructions read, under the same
//     guard (the score matmul into PSUM under its evacuation, the transposes under the P.V
//     matmul), closed backwards from the two above.
// A loop is guarded only where every instruction inside it is skipped under the same guard, an
// accumulation's first iteration always runs, and nothing is skipped otherwise; the row's
// element-wise instructions (max, exp, sum) still run whole. As for the online nests, exactness
// assumes finite row statistics (every row keeps an element: a causal mask's diagonal).
#include <algorithm>
#include <map>
#include <set>

#include "emission.h"
#include "tilesweep/lower/frame.h"
#include "tilesweep/semantics/expr.h"
#include "tilesweep/verify/tile_skip.h"

namespace ts::lower {

namespace {

const std::string& masked_select_text() {
  static const std::string text =
      sem::to_string(*sem::parse_expr(verify::kMaskedSelect, SourceLoc{}));
  return text;
}

const std::string& matmul_text() {
  static const std::string text =
      sem::to_string(*sem::parse_expr("sum(k, stationary * moving)", SourceLoc{}));
  return text;
}

// An affine form over loop variables (a guard's, a window's start).
Guard normal(Guard g) {
  std::map<int, std::int64_t> by;
  for (auto [b, s] : g.terms) by[b] += s;
  g.terms.clear();
  for (auto [b, s] : by)
    if (s != 0) g.terms.push_back({b, s});
  return g;
}

bool same_guard(const Guard& a, const Guard& b) {
  Guard x = normal(a), y = normal(b);
  return x.offset == y.offset &&
         std::vector<std::pair<int, std::int64_t>>(x.terms.begin(), x.terms.end()) ==
             std::vector<std::pair<int, std::int64_t>>(y.terms.begin(), y.terms.end());
}

struct Skipper {
  Emission& e;
  const Nest& nest;
  Program& p = e.builder.program();
  std::vector<int> block_of;                         // per instruction (-1: not placed)
  std::vector<int> insts;                            // the nest's instructions (under its body)
  std::map<int, std::vector<int>> readers, writers;  // buffer -> instructions (whole program)
  const Inst* select = nullptr;
  int sel = -1;
  std::int64_t rows = 0, row = 0;  // the select's tile [rows, row]
  std::map<int, Guard> skip;       // instruction -> guard over its own loops
  std::set<int> roots;             // skipped for their own reason (not dead)

  bool inside(int block, int ancestor) const {
    for (int b = block; b >= 0; b = p.blocks[static_cast<std::size_t>(b)].parent)
      if (b == ancestor) return true;
    return false;
  }
  bool encloses(int block, int inst) const { return inside(block_of[inst], block); }
  std::int64_t trips(int b) const { return p.blocks[static_cast<std::size_t>(b)].trips; }
  std::int64_t cols(int buffer) const {
    return p.buffers[static_cast<std::size_t>(buffer)].shape.back();
  }

  void index() {
    block_of.assign(p.insts.size(), -1);
    for (std::size_t b = 0; b < p.blocks.size(); ++b)
      for (const Item& item : p.blocks[b].items)
        if (item.inst >= 0) block_of[static_cast<std::size_t>(item.inst)] = static_cast<int>(b);
    for (std::size_t i = 0; i < p.insts.size(); ++i) {
      const Inst& in = p.insts[i];
      for (int b : in.in) readers[b].push_back(static_cast<int>(i));
      if (in.out >= 0) writers[in.out].push_back(static_cast<int>(i));
      if (block_of[i] >= 0 && inside(block_of[i], nest.body)) insts.push_back(static_cast<int>(i));
    }
  }

  static Window window_of(const SmallVector<Window, 3>& w, std::size_t j) {
    return j < w.size() ? w[j] : Window{};
  }
  std::int64_t width(const Window& w, int buffer) const {
    return w.whole() ? cols(buffer) : w.width;
  }

  // The renaming of `a`'s loops (instruction ia) to `b`'s (instruction ib) under which window a of
  // buffer `buf` is window b: equal offsets and widths, unit steps and no repeated columns
  // (Window::repeat), the terms paired by step and trips (the same loop, or a loop of each side
  // the other is not in).
  std::optional<std::map<int, int>> match(const Window& a, int ia, const Window& b, int ib,
                                          int buf) const {
    if (a.offset != b.offset || width(a, buf) != width(b, buf) || a.step != 1 || b.step != 1 ||
        a.repeat != 1 || b.repeat != 1)
      return std::nullopt;
    std::map<int, int> to;
    Guard ga = normal({a.terms, 0}), gb = normal({b.terms, 0});
    if (ga.terms.size() != gb.terms.size()) return std::nullopt;
    std::vector<bool> used(gb.terms.size(), false);
    for (auto [ba, sa] : ga.terms) {
      bool found = false;
      for (std::size_t k = 0; k < gb.terms.size() && !found; ++k) {
        auto [bb, sb] = gb.terms[k];
        if (used[k] || sa != sb || trips(ba) != trips(bb)) continue;
        if (ba != bb && (encloses(ba, ib) || encloses(bb, ia))) continue;
        used[k] = found = true;
        to[ba] = bb;
      }
      if (!found) return std::nullopt;
    }
    return to;
  }

  // `g` over `from`'s loops as a guard over instruction `at`'s: renamed by `to`, the loops not
  // renamed shared (around `at`).
  std::optional<Guard> rename(const Guard& g, const std::map<int, int>& to, int at) const {
    Guard out{{}, g.offset};
    for (auto [b, s] : g.terms) {
      auto r = to.find(b);
      int nb = r != to.end() ? r->second : b;
      if (!encloses(nb, at)) return std::nullopt;
      out.terms.push_back({nb, s});
    }
    return normal(out);
  }

  // The guard under which instruction `i`'s window `w` (of the select's operand or output layout,
  // `sel_window` the select's own) runs: the select's predicate at the window's corner.
  std::optional<Guard> window_guard(const Window& sel_window, int buf, const Window& w, int i,
                                    const verify::WindowSkipProof& proof) const {
    if (w.whole() || w.step != 1 || sel_window.step != 1) return std::nullopt;
    std::map<int, int> to;
    Guard c0 = normal({w.terms, w.offset - sel_window.offset});
    for (auto [bs, ss] : normal({sel_window.terms, 0}).terms) {
      bool found = false;
      for (std::size_t k = 0; k < c0.terms.size() && !found; ++k) {
        auto [bw, sw] = c0.terms[k];
        if (sw != ss || trips(bw) != trips(bs)) continue;
        if (bw != bs && (encloses(bs, i) || encloses(bw, sel))) continue;
        to[bs] = bw;
        Terms rest;
        for (std::size_t t = 0; t < c0.terms.size(); ++t)
          if (t != k) rest.push_back(c0.terms[t]);
        c0.terms = rest;
        found = true;
      }
      if (!found) return std::nullopt;
    }
    // The window lies inside the select's row at every iteration.
    std::int64_t lo = c0.offset, hi = c0.offset;
    for (auto [b, s] : c0.terms) (s < 0 ? lo : hi) += s * (trips(b) - 1);
    if (lo < 0 || hi + w.width > width(sel_window, buf)) return std::nullopt;
    Guard moving{select->moving, 0};
    std::optional<Guard> g = rename(moving, to, i);
    if (!g) return std::nullopt;
    const auto* base = std::get_if<std::int64_t>(&select->attrs.at(verify::kMaskOffset));
    Guard out = *g;
    out.offset = *base + proof.step * c0.offset + proof.slack(rows, w.width);
    for (auto [b, s] : c0.terms) out.terms.push_back({b, proof.step * s});
    return normal(out);
  }

  bool moves_data(const Inst& in) const {
    if (in.dma || in.in.size() != 1 || !in.spec || !in.spec->op.expr) return false;
    auto k = in.spec->op.expr->kind;
    return k == sem::Expr::Name || k == sem::Expr::Access;
  }

  std::optional<std::int64_t> integer(const char* name) const {
    auto a = select->attrs.find(name);
    if (a == select->attrs.end()) return std::nullopt;
    if (const auto* i = std::get_if<std::int64_t>(&a->second)) return *i;
    return std::nullopt;
  }

  // The element-wise chain from the `where` node `w` to `x` (each step one operand on the path,
  // the other a per-row value or a constant), in the order applied; none where it is not one.
  std::optional<std::vector<verify::ChainOp>> chain(int w, int x) const {
    std::vector<verify::ChainOp> out;
    while (x != w) {
      const ir::Node& n = e.kernel.nodes[static_cast<std::size_t>(x)];
      auto per_row = [&](int in) {
        const auto& s = e.shape(in);
        return e.constant(in).has_value() || (!s.empty() && s.back() == 1);
      };
      if ((n.op == "exp" || n.op == "astype") && n.inputs.size() == 1) {
        out.push_back(n.op == "exp" ? verify::ChainOp::Exp : verify::ChainOp::Cast);
        x = n.inputs[0];
        continue;
      }
      if (n.inputs.size() != 2) return std::nullopt;
      int path = 0;
      if (per_row(n.inputs[0]) && !per_row(n.inputs[1])) path = 1;
      if (!per_row(n.inputs[1 - path])) return std::nullopt;
      if (n.op == "sub" && path == 0)
        out.push_back(verify::ChainOp::SubRow);
      else if (n.op == "div" && path == 0)
        out.push_back(verify::ChainOp::DivRow);
      else if (n.op == "add")
        out.push_back(verify::ChainOp::AddRow);
      else if (n.op == "mul")
        out.push_back(verify::ChainOp::MulRow);
      else
        return std::nullopt;
      x = n.inputs[static_cast<std::size_t>(path)];
    }
    std::reverse(out.begin(), out.end());
    return out;
  }

  bool find_select() {
    for (int i : insts) {
      const Inst& in = p.insts[static_cast<std::size_t>(i)];
      if (!in.spec || !in.spec->op.expr ||
          sem::to_string(*in.spec->op.expr) != masked_select_text() ||
          in.moving_attr != verify::kMaskOffset)
        continue;
      if (select) return false;  // two selects
      select = &in;
      sel = i;
    }
    if (!select || select->in.size() != 1) return false;
    if (!std::get_if<std::int64_t>(&select->attrs.at(verify::kMaskOffset))) return false;
    rows = p.buffers[static_cast<std::size_t>(select->out)].shape.front();
    row = width(window_of(select->in_window, 0), select->in[0]);
    return row == width(select->out_window, select->out);
  }

  // Overwritten: the writers of the select's operand, which only the select reads.
  void overwritten(const verify::WindowSkipProof& proof) {
    int x = select->in[0];
    if (readers[x] != std::vector<int>{sel}) return;
    for (int w : writers[x]) {
      if (std::find(insts.begin(), insts.end(), w) == insts.end()) continue;
      const Inst& in = p.insts[static_cast<std::size_t>(w)];
      if (std::find(in.in.begin(), in.in.end(), x) != in.in.end()) continue;
      if (auto g = window_guard(window_of(select->in_window, 0), x, in.out_window, w, proof)) {
        skip[w] = *g;
        roots.insert(w);
      }
    }
  }

  // ZeroFactor: accumulating matmuls reading, through data movements, a window of `value`
  // (laid out as the select's output) that is zero where the mask fails.
  // The first instruction after `from` that writes `buffer` (p.insts.size(): none).
  int next_writer(int buffer, int from) const {
    for (int w : writers.at(buffer))
      if (w > from) return w;
    return static_cast<int>(p.insts.size());
  }

  void zero_factor(int value, int from, int until, const verify::WindowSkipProof& proof) {
    // A reader of a zero window: a data movement passes it on, an accumulating matmul skips.
    std::vector<std::pair<int, Guard>> zero;  // (data movement, guard of its output window)
    auto reads_zero = [&](int r, const Guard& g) {
      const Inst& ri = p.insts[static_cast<std::size_t>(r)];
      if (moves_data(ri)) {
        zero.push_back({r, g});
      } else if (ri.accumulate_block >= 0 && ri.spec && ri.spec->op.expr &&
                 sem::to_string(*ri.spec->op.expr) == matmul_text() &&
                 std::find(ri.in.begin(), ri.in.end(), ri.out) == ri.in.end()) {
        skip[r] = g;
        roots.insert(r);
      }
    };
    for (int r : readers[value]) {
      const Inst& in = p.insts[static_cast<std::size_t>(r)];
      if (r < from || r >= until || std::find(insts.begin(), insts.end(), r) == insts.end())
        continue;
      for (std::size_t j = 0; j < in.in.size(); ++j)
        if (in.in[j] == value && in.lag(j) == 0)
          if (auto g =
                  window_guard(select->out_window, value, window_of(in.in_window, j), r, proof))
            reads_zero(r, *g);
    }
    for (std::size_t z = 0; z < zero.size(); ++z) {
      auto [w, g] = zero[z];
      const Inst& wi = p.insts[static_cast<std::size_t>(w)];
      for (int r : readers[wi.out]) {
        if (r <= w || r >= next_writer(wi.out, w) ||
            std::find(insts.begin(), insts.end(), r) == insts.end())
          continue;
        const Inst& ri = p.insts[static_cast<std::size_t>(r)];
        for (std::size_t j = 0; j < ri.in.size(); ++j) {
          if (ri.in[j] != wi.out || ri.lag(j) != 0) continue;
          auto to = match(wi.out_window, w, window_of(ri.in_window, j), r, wi.out);
          if (!to) continue;
          if (std::optional<Guard> rg = rename(g, *to, r)) reads_zero(r, *rg);
        }
      }
    }
  }

  // Dead: backwards from the skipped, the writers of a window only skipped instructions read.
  void dead() {
    for (bool grew = true; grew;) {
      grew = false;
      for (auto [i, g] : std::map<int, Guard>(skip)) {
        const Inst& in = p.insts[static_cast<std::size_t>(i)];
        for (std::size_t j = 0; j < in.in.size(); ++j) {
          int buf = in.in[j];
          if (in.lag(j) != 0) continue;
          for (int w : writers[buf]) {
            if (skip.count(w) || std::find(insts.begin(), insts.end(), w) == insts.end()) continue;
            const Inst& wi = p.insts[static_cast<std::size_t>(w)];
            auto to = match(window_of(in.in_window, j), i, wi.out_window, w, buf);
            if (!to) continue;
            if (std::optional<Guard> wg = rename(g, *to, w)) {
              skip[w] = *wg;
              grew = true;
            }
          }
        }
      }
    }
  }

  // Drops what is not exact as placed; true when something was dropped.
  bool prune() {
    std::set<int> drop;
    for (auto& [i, g] : skip) {
      const Inst& in = p.insts[static_cast<std::size_t>(i)];
      // Dead: every reader of its output skipped under the same guard, over the same window.
      if (!roots.count(i)) {
        for (int r : readers[in.out]) {
          auto s = skip.find(r);
          bool ok = s != skip.end();
          if (ok) {
            const Inst& ri = p.insts[static_cast<std::size_t>(r)];
            bool any = false;
            for (std::size_t j = 0; j < ri.in.size() && ok; ++j) {
              if (ri.in[j] != in.out) continue;
              auto to = match(in.out_window, i, window_of(ri.in_window, j), r, in.out);
              std::optional<Guard> rg = to ? rename(g, *to, r) : std::nullopt;
              ok = ri.lag(j) == 0 && rg && same_guard(*rg, s->second);
              any = true;
            }
            ok = ok && any;
          }
          if (!ok) drop.insert(i);
        }
      }
      // The loop it is guarded by: inside the nest's body, every instruction in it skipped alike.
      int l = block_of[static_cast<std::size_t>(i)];
      if (l == nest.body || !inside(l, nest.body) || p.blocks[static_cast<std::size_t>(l)].guard) {
        drop.insert(i);
        continue;
      }
      for (int other : insts)
        if (encloses(l, other)) {
          auto s = skip.find(other);
          if (s == skip.end() || !same_guard(s->second, g)) drop.insert(i);
        }
      // An accumulation's first iteration runs (the guard holds at its loop's 0).
      if (in.accumulate_block >= 0 && encloses(in.accumulate_block, i)) {
        std::int64_t least = g.offset;
        for (auto [b, s] : g.terms)
          if (b != in.accumulate_block && s < 0) least += s * (trips(b) - 1);
        if (least < 0) drop.insert(i);
      }
    }
    for (int i : drop) {
      skip.erase(i);
      roots.erase(i);
    }
    return !drop.empty();
  }

  void run() {
    if (nest.tiling.online > 0 || nest.streamed || nest.free_tile > 0 || nest.carry >= 0 ||
        nest.chunk_block >= 0 || nest.body <= 0)
      return;
    index();
    if (!find_select()) return;
    auto fill = select->attrs.find(verify::kMaskFill);
    auto cm = integer(verify::kMaskChannelMultiplier), step = integer(verify::kMaskStep);
    if (fill == select->attrs.end() || !cm || !step) return;
    const auto* fill_value = std::get_if<double>(&fill->second);
    if (!fill_value) return;
    verify::WindowSkipRule rule{*cm, *step, 0, *fill_value, verify::WindowUse::Overwritten, {}};
    verify::WindowSkipProof over = verify::prove_window_skip_once(rule);
    // (A software-pipelined nest's first stage is the score matmul's loop, whose evacuations must
    // each start one version of their tile per strip: software_pipeline.h refuses them guarded.)
    if (over.proved && !nest.tiling.pipeline) overwritten(over);
    // The where node the select computes, and the matmuls of the nest whose left operand is a
    // chain of it, computed after it (emitted: its writers, laid out as the select's output;
    // read until its buffer is written again).
    int where = -1;
    for (const Emission::Emitted& m : e.emitted)
      if (m.buffer == select->out && static_cast<std::size_t>(sel) >= m.first &&
          static_cast<std::size_t>(sel) < m.last)
        where = m.node;
    if (where < 0 || !e.prefix.reads_mask[static_cast<std::size_t>(where)]) return finish();
    for (int n : e.plan.groups[static_cast<std::size_t>(nest.group)]) {
      const ir::Node& node = e.kernel.nodes[static_cast<std::size_t>(n)];
      if (!is_matmul(node) || node.inputs.empty()) continue;
      int x = node.inputs[0];
      const Emission::Emitted* made = nullptr;
      for (const Emission::Emitted& m : e.emitted)
        if (m.node == x && m.first > static_cast<std::size_t>(sel)) made = &m;
      if (!made || made->last <= made->first) continue;
      bool laid_out = true;
      int last_writer = -1;
      for (std::size_t i = made->first; i < made->last; ++i) {
        const Inst& in = p.insts[i];
        if (in.out != made->buffer) continue;
        last_writer = static_cast<int>(i);
        laid_out =
            laid_out &&
            match(select->out_window, sel, in.out_window, last_writer, made->buffer).has_value();
      }
      if (!laid_out || last_writer < 0) continue;
      std::optional<std::vector<verify::ChainOp>> ops = chain(where, x);
      if (!ops) continue;
      rule.use = verify::WindowUse::ZeroFactor;
      rule.chain = *ops;
      verify::WindowSkipProof zero = verify::prove_window_skip_once(rule);
      if (zero.proved)
        zero_factor(made->buffer, last_writer + 1, next_writer(made->buffer, last_writer), zero);
    }
    finish();
  }

  void finish() {
    if (skip.empty()) return;
    dead();
    while (prune()) {
    }
    for (auto& [i, g] : skip)
      p.blocks[static_cast<std::size_t>(block_of[static_cast<std::size_t>(i)])].guard = g;
  }
};

}  // namespace

void skip_masked_tiles(Emission& e, const Nest& nest) { Skipper{e, nest}.run(); }

}  // namespace ts::lower

// Which loops over the tiles of a generic dim may end on a partial tile (nki_shapes.h). The
// lanes of a tile past the tensor's end hold stale values: they are safe when nothing reduces
// across them and nothing stores them. Traced from the loads (a tile dim fed by the loop) through
// every instruction's pattern dims (an operand dim named in the output pattern carries on, one
// that is not is reduced) to the stores, which must cut the same loop's tile short. One
// reduction is safe too: a sum of products over the lanes (a matmul's contraction) whose factors
// are all zero there, which holds when each load along the loop zeroes its whole tile first and
// only instructions that move data unchanged (an element expression that is a bare operand
// access: copies, transposes) lie between the load and the sum.
#include <set>

#include "tilesweep/lower/nki_shapes.h"

namespace ts::lower {

namespace {

// The one tensor dim of `a` whose start moves with block `b`; -1 when none, -2 when several dims
// do or that dim also moves with another block.
int dim_moved_by(const Access& a, int b) {
  int found = -1;
  for (std::size_t d = 0; d < a.terms.size(); ++d) {
    bool moves = false, other = false;
    for (const auto& [blk, step] : a.terms[d])
      if (step != 0) (blk == b ? moves : other) = true;
    if (!moves) continue;
    if (found != -1 || other) return -2;
    found = static_cast<int>(d);
  }
  return found;
}

// True when DMA `in` moves a plain tile along block `b`'s dim: one tensor dim per tile dim in
// order (no reshape, broadcast or transpose), that dim stepped by exactly the tile, of size
// exactly the generic dim, and no window on the tile dim it feeds.
bool plain_tile_access(const Program& p, const Inst& in, int b, const PartialLoop& loop,
                       const std::map<int, std::vector<std::string>>& hbm_shape) {
  const Access& a = in.hbm;
  int d = dim_moved_by(a, b);
  if (d < 0 || in.spec->op.name != "dma_copy" || a.repeats_any()) return false;
  auto size = hbm_shape.find(a.buffer);
  if (size == hbm_shape.end() || size->second[d] != loop.dim) return false;
  std::int64_t step = 0;
  for (const auto& [blk, s] : a.terms[d])
    if (blk == b) step += s;
  bool offset = !a.offset.empty() && a.offset[d] != 0;
  if (step != loop.tile || a.extent[d] != loop.tile || offset || a.step(d) != 1) return false;
  int tile = in.store ? in.in[0] : in.out;
  bool windowed =
      in.store ? !in.in_window.empty() && !in.in_window[0].whole() : !in.out_window.whole();
  std::size_t rank = p.buffers[tile].shape.size();
  int last = -1;
  std::size_t fed = 0;
  for (int td : a.tile_dim) {
    if (td < 0) continue;
    if (td <= last) return false;
    last = td;
    ++fed;
  }
  if (fed != rank) return false;
  int td = a.tile_dim[d];
  return !(td == static_cast<int>(rank) - 1 && windowed);
}

// An operand's element: `x[p, f]`, or the operand's bare name.
bool operand_element(const sem::Expr& e, const sem::OpSpec& op) {
  if (e.kind == sem::Expr::Access) return true;
  return e.kind == sem::Expr::Name && op.operand_index(e.name) >= 0;
}

// True when the instruction's element expression is an operand's element (a copy, a
// transpose): a lane that is zero in the operand is zero in the result.
bool moves_data(const Inst& in) {
  const sem::ExprPtr& e = in.spec->op.expr;
  return e && operand_element(*e, in.spec->op);
}

// True when `name` is summed over products of operand elements (`sum(k, a * b)`): lanes of it
// that are zero in one factor add nothing.
bool sums_products_over(const sem::OpSpec& op, const std::string& name) {
  if (!op.expr) return false;
  const sem::Expr& e = *op.expr;
  if (e.kind != sem::Expr::Reduce || e.reducer != sem::Reducer::Sum || e.bound || e.name != name ||
      e.args.size() != 1)
    return false;
  const sem::Expr& body = *e.args[0];
  if (operand_element(body, op)) return true;
  if (body.kind != sem::Expr::Binary || body.op != sem::BinOp::Mul) return false;
  for (const auto& a : body.args)
    if (!operand_element(*a, op)) return false;
  return true;
}

using Lane = std::pair<int, int>;  // (on-chip buffer, dim)

class PartialTrace {
 public:
  PartialTrace(const Program& p, const std::map<int, std::vector<std::string>>& hbm_shape)
      : p_(p), hbm_shape_(hbm_shape) {}

  // The block of `loops` that breaks a rule, or -1 when all of them are safe; `zero_fill()` then
  // holds the loops whose stale lanes a sum of products reads.
  int breach(const std::map<int, PartialLoop>& loops);
  const std::set<int>& zero_fill() const { return zero_fill_; }

 private:
  bool taint(int buf, int dim, int block, int* bad);
  bool mark_nonzero(const Lane& lane);
  int through(const Inst& in);
  int contracted(const Inst& in);
  int accumulated(const Inst& in);
  int store(const Inst& in, const std::map<int, PartialLoop>& loops);

  const Program& p_;
  const std::map<int, std::vector<std::string>>& hbm_shape_;
  std::map<Lane, int> lanes_;  // (on-chip buffer, dim) -> the loop it is cut by
  std::set<Lane> nonzero_;     // cut lanes that may hold something other than zero
  std::set<int> zero_fill_;
  bool changed_ = false;
};

// Marks (buf, dim) as cut short by `block`; false with *bad set when another loop cuts it too.
bool PartialTrace::taint(int buf, int dim, int block, int* bad) {
  auto [it, fresh] = lanes_.emplace(std::make_pair(buf, dim), block);
  if (!fresh && it->second != block) *bad = block;
  return fresh;
}

bool PartialTrace::mark_nonzero(const Lane& lane) { return nonzero_.insert(lane).second; }

// The output dim of `in` that operand dim `name` carries on as; -1 when it is reduced.
int out_dim(const sem::OpSpec& op, const std::string& name) {
  for (std::size_t k = 0; k < op.out.items.size(); ++k)
    if (!op.out.items[k].group && op.out.items[k].name == name) return static_cast<int>(k);
  return -1;
}

// Carries the cut dims of a compute instruction's operands to its output (and whether they may
// be nonzero); the loop it breaks (a cut dim reduced other than by a sum of products, in a window
// or a pattern group), or -1. Sets `changed_` via taint() and mark_nonzero().
int PartialTrace::through(const Inst& in) {
  const sem::OpSpec& op = in.spec->op;
  int bad = -1;
  for (std::size_t j = 0; j < in.in.size() && j < op.shapes.size(); ++j) {
    const auto& items = op.shapes[j].items;
    const auto& shape = p_.buffers[in.in[j]].shape;
    for (std::size_t x = 0; x < shape.size(); ++x) {
      Lane lane{in.in[j], static_cast<int>(x)};
      auto it = lanes_.find(lane);
      if (it == lanes_.end()) continue;
      int block = it->second;
      bool windowed = j < in.in_window.size() && !in.in_window[j].whole() && x + 1 == shape.size();
      if (items.size() != shape.size() || items[x].group || items[x].name.empty() || windowed)
        return block;
      int y = out_dim(op, items[x].name);
      if (y < 0 && sums_products_over(op, items[x].name)) continue;
      if (y < 0 || in.out < 0) return block;
      const auto& out_shape = p_.buffers[in.out].shape;
      if (op.out.items.size() != out_shape.size()) return block;
      if (!in.out_window.whole() && y + 1 == static_cast<int>(out_shape.size())) return block;
      changed_ = taint(in.out, y, block, &bad) || changed_;
      if (bad >= 0) return bad;
      if (!moves_data(in) || nonzero_.count(lane)) changed_ = mark_nonzero({in.out, y}) || changed_;
    }
  }
  return -1;
}

// A sum of products over cut lanes (once every lane's zeroness is known): every operand with
// that dim cut by the same loop and zero there; records the loop as zero-filled. The loop it
// breaks, or -1.
int PartialTrace::contracted(const Inst& in) {
  const sem::OpSpec& op = in.spec->op;
  for (std::size_t j = 0; j < in.in.size() && j < op.shapes.size(); ++j) {
    const auto& items = op.shapes[j].items;
    for (std::size_t x = 0; x < items.size(); ++x) {
      auto it = lanes_.find({in.in[j], static_cast<int>(x)});
      if (it == lanes_.end() || out_dim(op, items[x].name) >= 0) continue;
      int block = it->second;
      for (std::size_t o = 0; o < in.in.size() && o < op.shapes.size(); ++o)
        for (std::size_t z = 0; z < op.shapes[o].items.size(); ++z) {
          if (op.shapes[o].items[z].name != items[x].name) continue;
          Lane other{in.in[o], static_cast<int>(z)};
          auto cut = lanes_.find(other);
          if (cut == lanes_.end() || cut->second != block || nonzero_.count(other)) return block;
        }
      zero_fill_.insert(block);
    }
  }
  return -1;
}

// An instruction accumulating across loop `b` of the partial ones must be summing `b`'s cut
// lanes (contracted()): the loop it breaks, or -1.
int PartialTrace::accumulated(const Inst& in) {
  int b = in.accumulate_block;
  const sem::OpSpec& op = in.spec->op;
  for (std::size_t j = 0; j < in.in.size() && j < op.shapes.size(); ++j)
    for (std::size_t x = 0; x < op.shapes[j].items.size(); ++x) {
      auto it = lanes_.find({in.in[j], static_cast<int>(x)});
      if (it != lanes_.end() && it->second == b && out_dim(op, op.shapes[j].items[x].name) < 0)
        return -1;
    }
  return b;
}

// A store of a cut tile must cut the same loop's dim short: the loop it breaks, or -1.
int PartialTrace::store(const Inst& in, const std::map<int, PartialLoop>& loops) {
  const Access& a = in.hbm;
  for (const auto& [key, block] : lanes_) {
    if (key.first != in.in[0]) continue;
    int d = dim_moved_by(a, block);
    if (d < 0 || a.tile_dim[d] != key.second ||
        !plain_tile_access(p_, in, block, loops.at(block), hbm_shape_))
      return block;
  }
  return -1;
}

int PartialTrace::breach(const std::map<int, PartialLoop>& loops) {
  lanes_.clear();
  nonzero_.clear();
  zero_fill_.clear();
  int bad = -1;
  for (const Inst& in : p_.insts) {
    if (!in.dma) continue;
    for (const auto& [b, loop] : loops) {
      int d = dim_moved_by(in.hbm, b);
      if (d == -1) continue;
      if (!plain_tile_access(p_, in, b, loop, hbm_shape_)) return b;
      if (in.store) continue;
      Lane lane{in.out, in.hbm.tile_dim[d]};
      taint(lane.first, lane.second, b, &bad);
      if (bad >= 0) return bad;
      if (!in.out_window.whole()) mark_nonzero(lane);  // zeroing it would clear the other windows
    }
  }
  // Program order need not follow the data (a tile written in a later loop of an outer one), so
  // carried until nothing changes; each round only adds.
  changed_ = true;
  while (changed_) {
    changed_ = false;
    for (const Inst& in : p_.insts)
      if (!in.dma && in.out >= 0)
        if (int b = through(in); b >= 0) return b;
  }
  for (const Inst& in : p_.insts) {
    if (in.dma && in.store)
      if (int b = store(in, loops); b >= 0) return b;
    if (!in.dma && in.out >= 0)
      if (int b = contracted(in); b >= 0) return b;
    if (in.accumulate_block >= 0 && loops.count(in.accumulate_block))
      if (int b = accumulated(in); b >= 0) return b;
  }
  return -1;
}

}  // namespace

std::map<int, PartialLoop> partial_loops(const Program& p, std::map<int, PartialLoop> candidates,
                                         const std::map<int, std::vector<std::string>>& hbm_shape) {
  PartialTrace trace(p, hbm_shape);
  while (!candidates.empty()) {
    int bad = trace.breach(candidates);
    if (bad < 0) break;
    candidates.erase(bad);
  }
  for (auto& [b, loop] : candidates) loop.zero_fill = trace.zero_fill().count(b) > 0;
  return candidates;
}

}  // namespace ts::lower

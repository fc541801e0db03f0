// Online nests (issue 19; online_split.h): a group whose matmul contracts a row that is streamed
// key tile by key tile (GroupTiling::online), its operand an element-wise chain of the streamed
// value and a running statistic (FlashAttention: softmax(S) V with the division after P.V).
// Inside the strip loop:
//   - before the key tiles: each running value at its start (the statistic and each online
//     reduction at their reducers' identities, the matmul's accumulator [rows, N] at 0); the
//     strip's values the streamed row is made from that are not as long as the row (q / sqrt(d)),
//     and each score matmul's left operand where it is read once per strip (q^T: hoisted_lhs);
//   - per key tile: where the streamed value is made in the nest (attention's scores s = q k^T
//     and the ops between them and the statistic's operand), the tile of it first: each score
//     matmul over the tile's columns in PSUM banks of 512 (its K tiles accumulated, the right-hand
//     side's columns of the tile loaded), evacuated into the tile's [rows, W] value, then the
//     element-wise ops on it; then the statistic's tile partial and fold into its new value, the
//     correction
//     chain(old, new) (the kernel's own chain on [rows, 1] columns), the tile's wide values from
//     the new statistic, each online reduction's partial folded as run = run * c + partial, and
//     the matmul's partial product over the tile's K tiles in PSUM folded as acc = acc * c + pv
//     (one scalar_tensor_tensor each); then the old statistic takes the new one;
//   - after them: the running values as the group's per-row values, then the rest of the group
//     (the division by the sum) on them, at the strip level;
//   - without an online matmul (a softmax whose output is the row itself): the row-wide ops after
//     the reductions in a second pass over the key tiles, which makes the streamed value and the
//     wide chain again from the final statistic (the scores recomputed, not kept) and stores each
//     key tile of the result. Each row is read (or its scores computed) twice; no row is whole.
// Each fold is the proved online split (online_split.h); the statistic's is its proved split.
// A key tile that a mask fills entirely (a causal mask's tiles above the diagonal) is skipped:
// the key tile loop's guard (Block::guard) is the mask's own affine predicate at the tile's
// corner, placed only where verify/tile_skip.h proves that such a tile leaves the running max
// and every rescaled running value as they are (skip_masked).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "emission.h"
#include "row_ops.h"
#include "tilesweep/lower/index_source.h"
#include "tilesweep/lower/online_split.h"
#include "tilesweep/lower/split_reduction.h"
#include "tilesweep/semantics/expr.h"
#include "tilesweep/verify/tile_skip.h"

namespace ts::lower {

namespace {

struct Online {
  Emission& e;
  Nest& nest;
  const std::vector<int>& nodes = e.plan.groups[nest.group];
  int strip_body = nest.body;
  std::int64_t row = 0, w = nest.tiling.online;
  int statistic = -1, source = -1, matmul = -1;
  std::vector<int> reductions;  // online reductions (consumers of the statistic)
  std::vector<int> chain;       // the correction's ops
  std::vector<int> wide, tail;  // per key tile / after the key tiles
  // Two passes (no online matmul): the row-wide ops after the key tiles (a softmax's division by
  // its sum), run in a second pass over the key tiles that makes the wide values again from the
  // final statistic.
  std::vector<int> again;
  // The nest's ops the streamed value is made by: per strip (narrower than the row), and per key
  // tile before the statistic (matmuls among them: score matmuls).
  std::vector<int> before, made;

  std::int64_t cols(int node) const {
    Frame f = e.frame(node);
    return f.col >= 0 ? e.shape(node)[f.col] : 1;
  }
  Depth depth() const { return nest.strip_depth(); }
  std::optional<NoProgram> classify();
  Lowered<int> running(int node, std::int64_t width, double start);
  Lowered<Tile> correction(RowOps& run, const Tile& old_value, const Tile& new_value);
  std::optional<NoProgram> score(RowOps& run, int node, int strip_lhs_buffer);
  std::optional<NoProgram> rescale(int block, int node, const Tile& run, const Tile& c,
                                   const Tile& partial, const std::string& combine);
  std::optional<NoProgram> product(RowOps& run, const Tile& acc, const Tile& c);
  std::optional<verify::TileMask> mask_of(const Inst& select) const;
  bool skips(const verify::TileMask& mask, double fill) const;
  void skip_masked(int key_loop);
  std::optional<NoProgram> emit();
  // A loop over the key tiles in the strip, as the nest's free-tile loop; `close_key_tiles` returns
  // the nest to the strip level, forgetting the tiles' wide values.
  int open_key_tiles() {
    int f = nest_loop(e, strip_body, "f", row / w);
    nest.free_loop = loop_var(f, strip_body);
    nest.free_tile = w;
    nest.streamed = true;
    nest.body = f;
    return f;
  }
  void close_key_tiles() {
    std::erase_if(nest.values, [&](const auto& v) { return cols(v.first) == row; });
    nest.free_loop = -1;
    nest.free_tile = 0;
    nest.streamed = false;
    nest.body = strip_body;
  }
};

// The semantics the rule models (tile_skip.h) as sem::to_string writes an instruction's.
const std::string& masked_select() {
  static const std::string text =
      sem::to_string(*sem::parse_expr(verify::kMaskedSelect, SourceLoc{}));
  return text;
}

// The mask of `select`, an instruction of the masked select the rule models (tile_skip.h) on
// the streamed value's tile: its offset attribute's coefficients of the tile's row and column
// origins and its constant, read off the lowering of the op that made it (its offset a dim
// expression over the origins I and J, index_source.h), with the per-element coefficients.
std::optional<verify::TileMask> Online::mask_of(const Inst& select) const {
  const OpPick& pick = e.plan.picks.at(source);
  if (!pick.lowering) return std::nullopt;
  auto integer = [&](const sem::AttrMap& attrs, const char* name) -> std::optional<std::int64_t> {
    auto a = attrs.find(name);
    if (a == attrs.end()) return std::nullopt;
    if (const auto* i = std::get_if<std::int64_t>(&a->second)) return *i;
    if (const auto* d = std::get_if<sem::Dim>(&a->second); d && d->is_const())
      return d->evaluate({});
    return std::nullopt;
  };
  std::optional<verify::TileMask> out;
  for (const ir::Node& n : pick.lowering->nodes) {
    if (n.op != select.spec->op.name) continue;
    auto offset = n.attrs.find(verify::kMaskOffset);
    if (offset == n.attrs.end() || out) return std::nullopt;  // (one select in the lowering)
    const auto* d = std::get_if<sem::Dim>(&offset->second);
    if (!d) return std::nullopt;
    auto at = [&](std::int64_t i, std::int64_t j) {
      return d->evaluate({{kRowOrigin, i + 1}, {kColOrigin, j + 1}});
    };
    auto c = at(0, 0), r = at(1, 0), k = at(0, 1);
    auto cm = integer(select.attrs, verify::kMaskChannelMultiplier);
    auto step = integer(select.attrs, verify::kMaskStep);
    if (!c || !r || !k || !cm || !step) return std::nullopt;
    out = verify::TileMask{*r - *c, *k - *c, *c, *cm, *step, 0};
  }
  return out;
}

// True where the rule is proved for a tile of `fill` values under `mask` into each running value
// of the nest: the statistic a max, each online reduction a sum and the matmul, both over the
// chain the rule models (exp(x - max)).
bool Online::skips(const verify::TileMask& mask, double fill) const {
  auto proved = [&](verify::Contribution into) {
    return verify::prove_tile_skip_once({mask, fill, into}).proved;
  };
  if (e.kernel.nodes[statistic].op != "max" || !proved(verify::Contribution::Max)) return false;
  for (int n : reductions) {
    const OnlineSplit* s = proved_online(*e.plan.online, n);
    if (!s || s->form != verify::kExpChain || e.kernel.nodes[n].op != "sum" ||
        !proved(verify::Contribution::RescaledSumExp))
      return false;
  }
  if (matmul < 0) return true;  // (the second pass runs every tile)
  const OnlineSplit* s = proved_online(*e.plan.online, matmul);
  return s && s->form == verify::kExpChain &&
         proved(verify::Contribution::RescaledMatmulAccumulate);
}

// The guard of the key tile loop `key_loop` (its body emitted): where the streamed value's tile
// is written by one instruction, the masked select of tile_skip.h whose offset moves with the
// loops around the key tiles (and no loop inside), the loop runs a key tile only where the
// select's predicate at the tile's corner, offset + max(0, channel_multiplier) (P - 1) +
// max(0, step) (W - 1), is >= 0: elsewhere every element of the tile is the fill. Placed when
// the rule is proved for the fill into every running value (skips); else every tile runs.
void Online::skip_masked(int key_loop) {
  auto value = nest.values.find(source);
  if (value == nest.values.end() || !e.prefix.reads_mask[static_cast<std::size_t>(source)]) return;
  const Program& p = e.builder.program();
  // The instructions inside the key tile loop, and the blocks around it.
  std::vector<int> insts, around;
  for (int b = key_loop; b >= 0; b = p.blocks[static_cast<std::size_t>(b)].parent)
    around.push_back(b);
  for (std::vector<int> todo = {key_loop}; !todo.empty();) {
    int b = todo.back();
    todo.pop_back();
    for (const Item& item : p.blocks[static_cast<std::size_t>(b)].items) {
      if (item.inst >= 0) insts.push_back(item.inst);
      if (item.block >= 0) todo.push_back(item.block);
    }
  }
  const Inst* select = nullptr;
  for (int i : insts) {
    const Inst& in = p.insts[static_cast<std::size_t>(i)];
    if (in.out != value->second.buffer) continue;
    if (select) return;  // written twice: not the select's tile alone
    select = &in;
  }
  if (!select || !select->spec || !select->spec->op.expr ||
      sem::to_string(*select->spec->op.expr) != masked_select() ||
      select->moving_attr != verify::kMaskOffset)
    return;
  for (auto [block, step] : select->moving)
    if (std::find(around.begin(), around.end(), block) == around.end()) return;
  auto base = select->attrs.find(verify::kMaskOffset);
  auto fill = select->attrs.find(verify::kMaskFill);
  if (base == select->attrs.end() || fill == select->attrs.end()) return;
  const auto* offset = std::get_if<std::int64_t>(&base->second);
  const auto* fill_value = std::get_if<double>(&fill->second);
  std::optional<verify::TileMask> mask = mask_of(*select);
  if (!offset || !fill_value || !mask || !skips(*mask, *fill_value)) return;
  verify::TileSkipProof shape;
  shape.mask = *mask;
  Guard g;
  g.terms = select->moving;
  g.offset = *offset + shape.corner(nest.tiling.pt, value->second.cols);
  e.builder.program().blocks[static_cast<std::size_t>(key_loop)].guard = g;
}

// The group's roles: one statistic, online reductions, one online matmul, the wide chain and
// the tail after the key tiles; NoProgram for anything else.
std::optional<NoProgram> Online::classify() {
  const std::vector<OnlineSplit>& online = *e.plan.online;
  for (int n : nodes) {
    const ir::Node& node = e.kernel.nodes[n];
    const OnlineSplit* s = proved_online(online, n);
    if (s) {
      if (statistic >= 0 && s->statistic != statistic)
        return NoProgram{"an online nest with two running statistics", n};
      statistic = s->statistic;
      source = s->source;
      chain = s->chain;
      if (is_matmul(node)) {
        if (matmul >= 0) return NoProgram{"an online nest with two matmuls", n};
        matmul = n;
      } else {
        reductions.push_back(n);
      }
    }
  }
  if (statistic < 0 || (matmul < 0 && reductions.empty()))
    return NoProgram{"an online nest without an online consumer"};
  for (int n : chain)
    if (std::find(nodes.begin(), nodes.end(), n) == nodes.end())
      return NoProgram{"an online chain outside its nest", n};
  if (std::find(nodes.begin(), nodes.end(), statistic) == nodes.end())
    return NoProgram{"an online statistic outside its nest", statistic};
  row = cols(source);
  if (nest.tiling.block != 1 || row <= w || row % w || w % 128)
    return NoProgram{fmt::format("online key tile {} for rows of {}", w, row)};
  auto folded = [&](int n) {  // an online value the rescaling folds as it stands
    return n == statistic || n == matmul || std::count(reductions.begin(), reductions.end(), n);
  };
  auto in_nest = [&](int n) { return std::find(nodes.begin(), nodes.end(), n) != nodes.end(); };
  // The nest's ops the streamed value depends on (the value itself included).
  std::set<int> makes_source;
  for (std::vector<int> stack = {source}; !stack.empty();) {
    int n = stack.back();
    stack.pop_back();
    if (!in_nest(n) || !makes_source.insert(n).second) continue;
    for (int in : e.kernel.nodes[n].inputs) stack.push_back(in);
  }
  for (int n : nodes) {
    if (!makes_source.count(n)) continue;
    const ir::Node& node = e.kernel.nodes[n];
    if (e.is_transposed(n)) return NoProgram{"a transposed value in an online nest", n};
    if (e.prefix.views[static_cast<std::size_t>(n)] ||
        e.prefix.has_axis[static_cast<std::size_t>(n)])
      return NoProgram{fmt::format("'{}' making an online nest's streamed value", node.op), n};
    if (auto a = e.plan.absorbed.find(n);
        a != e.plan.absorbed.end() && !makes_source.count(a->second))
      return NoProgram{"an instruction fusion of an online nest's streamed value", n};
    bool per_tile = std::any_of(node.inputs.begin(), node.inputs.end(), [&](int in) {
      return std::count(made.begin(), made.end(), in) > 0;
    });
    if (cols(n) == row && !(per_tile && is_matmul(node))) {
      made.push_back(n);
    } else if (per_tile || is_matmul(node)) {
      return NoProgram{fmt::format("'{}' making an online nest's streamed value", node.op), n};
    } else {
      before.push_back(n);  // once per strip
    }
  }
  for (int n : nodes) {
    if (makes_source.count(n)) continue;
    if (auto a = e.plan.absorbed.find(n); a != e.plan.absorbed.end() && folded(a->second))
      return NoProgram{"an instruction fusion into an online nest's running value", n};
    if (folded(n) && e.plan.fused_operands.count(n))
      return NoProgram{"an instruction fusion into an online nest's running value", n};
    if (n == statistic || n == matmul || std::count(reductions.begin(), reductions.end(), n))
      continue;
    bool after =
        std::any_of(e.kernel.nodes[n].inputs.begin(), e.kernel.nodes[n].inputs.end(), [&](int in) {
          return in == matmul || std::count(reductions.begin(), reductions.end(), in) ||
                 std::count(tail.begin(), tail.end(), in);
        });
    if (after) {
      tail.push_back(n);
    } else if (e.prefix.has_axis[static_cast<std::size_t>(n)] || cols(n) != row ||
               is_matmul(e.kernel.nodes[n])) {
      return NoProgram{fmt::format("'{}' in an online nest", e.kernel.nodes[n].op), n};
    } else {
      wide.push_back(n);
    }
  }
  // (A row-wide op after the key tiles runs in the second pass; one with an axis has none.)
  std::erase_if(tail, [&](int n) {
    bool later = matmul < 0 && cols(n) == row && !e.prefix.has_axis[static_cast<std::size_t>(n)];
    if (later) again.push_back(n);
    return later;
  });
  for (int n : tail)
    if (cols(n) == row || e.prefix.has_axis[static_cast<std::size_t>(n)])
      return NoProgram{fmt::format("'{}' after an online nest's key tiles", e.kernel.nodes[n].op),
                       n};
  for (int n : tail)
    for (int in : e.kernel.nodes[n].inputs)
      if (std::count(again.begin(), again.end(), in))
        return NoProgram{"a per-row value of an online nest's second pass", n};
  for (int n : {statistic, matmul})
    if (e.prefix.views[static_cast<std::size_t>(n)] && n == statistic)
      return NoProgram{"an online statistic read outside its nest", n};
  for (int n : wide)
    if (e.prefix.views[static_cast<std::size_t>(n)])
      return NoProgram{"a wide value of an online nest read outside it", n};
  return std::nullopt;
}

// A strip buffer [rows, width] set to `start` before the key tiles.
Lowered<int> Online::running(int node, std::int64_t width, double start) {
  const ir::Node& n = e.kernel.nodes[node];
  std::int64_t pt = nest.tiling.pt;
  int buf = add_buffer(e, (n.label.empty() ? n.op : n.label) + "_run", sem::Memory::Sbuf, n.dtype,
                       {pt, width}, depth());
  Lowered<Inst*> made = make_inst(e, Common::Memset, {}, {pt, width}, n.dtype, {node, true});
  if (!made) return made.no_program();
  Inst& in = **made;
  in.out = buf;
  in.out_window = window({}, width == 2 ? 1 : width);
  in.attrs = {{"value", start}, {"P", sem::Dim(pt)}, {"F", sem::Dim(width == 2 ? 1 : width)}};
  if (e.plan.notes) in.note = fmt::format("running {} starts at {}", e.describe(node), start);
  e.builder.place(strip_body, in);
  return buf;
}

// chain(old, new) on [rows, 1] columns: each op of the chain by its own lowering, the source
// read as the old statistic and the statistic as the new one.
Lowered<Tile> Online::correction(RowOps& run, const Tile& old_value, const Tile& new_value) {
  std::int64_t pt = nest.tiling.pt;
  std::map<int, Tile> made;
  for (int n : chain) {
    if (e.plan.absorbed.count(n)) continue;  // computed by its region's root
    const ir::Node& node = e.kernel.nodes[n];
    std::vector<Tile> operands;
    std::vector<int> inputs;  // what the op's lowering reads: its own inputs or its region's
    if (auto r = e.plan.fused_operands.find(n); r != e.plan.fused_operands.end()) {
      for (auto [reader, i] : r->second)
        inputs.push_back(e.kernel.nodes[reader].inputs[static_cast<std::size_t>(i)]);
    } else {
      inputs = node.inputs;
    }
    for (int in : inputs) {
      if (in == source) {
        operands.push_back(old_value);
      } else if (in == statistic) {
        operands.push_back(new_value);
      } else if (made.count(in)) {
        operands.push_back(made.at(in));
      } else if (e.constant(in)) {
        Lowered<int> c = constant_tile(e, *e.constant(in), {pt, 1}, node.dtype);
        if (!c) return c.no_program();
        operands.push_back(Tile{*c, {}, {pt, 1}});
      } else {
        return NoProgram{"an online correction reading a value outside its chain", n};
      }
    }
    int buf = add_buffer(e, "corr", sem::Memory::Sbuf, node.dtype, {pt, 1}, depth());
    Tile dest{buf, {}, {pt, 1}};
    Lowered<Tile> out = emit_lowering(e, run.block, n, operands, &dest, -1, depth());
    if (!out) return out.no_program();
    made[n] = *out;
  }
  return made.at(chain.back());
}

// The key tile's [rows, W] of score matmul `node`: PSUM banks of 512 columns, each accumulating
// the K tiles of the left operand (the strip's, `strip_lhs_buffer`, or per tile where -1) against
// the tile's columns of the right-hand side, evacuated into the tile's value (a tile of one bank
// is read where it is, in PSUM).
std::optional<NoProgram> Online::score(RowOps& run, int node, int strip_lhs_buffer) {
  const ir::Node& n = e.kernel.nodes[node];
  const OpPick& pick = e.plan.picks.at(node);
  std::int64_t pt = nest.tiling.pt, K = e.shape(n.inputs[0]).back();
  std::int64_t k_tile = largest_divisor(K, 128), n_tile = largest_divisor(w, 512);
  int n_loop = nest_loop(e, run.block, "n", w / n_tile), n_var = loop_var(n_loop, run.block);
  Terms at = {{nest.free_loop, w}};
  if (n_var >= 0) at.push_back({n_var, n_tile});
  int k_loop = nest_loop(e, n_loop, "k", K / k_tile), k_var = loop_var(k_loop, n_loop);
  Lowered<Tile> rhs = load_rhs(e, nest, node, k_loop, k_var, k_tile, at, n_tile);
  if (!rhs) return rhs.no_program();
  Lowered<Tile> lhs =
      strip_lhs_buffer >= 0
          ? Tile{strip_lhs_buffer, window({{k_var, nest.strip_rows()}}, pt), {k_tile, pt}}
          : lhs_tile(e, nest, node, k_loop, -1, k_var, k_tile);
  if (!lhs) return lhs.no_program();
  int psum = add_buffer(e, "acc", sem::Memory::Psum, n.dtype, {pt, n_tile},
                        {std::min(2, nest.tiling.bufs), 2});
  e.builder.buffer(psum).fills_psum = true;  // psum_depth.cpp
  Tile sum{psum, {}, {pt, n_tile}};
  bool hoisted = strip_lhs_buffer >= 0 && !pick.stationary;
  Lowered<Tile> product = emit_lowering(e, k_loop, node, {*lhs, *rhs}, &sum, k_var, depth(),
                                        hoisted ? pick.hoist_root : nullptr);
  if (!product) return product.no_program();
  e.fusable_load = -1;
  if (n_tile == w) {  // one bank: the tile's readers read it in PSUM, not evacuated first
    nest.values[node] = {psum, w};
    return std::nullopt;
  }
  int buf = add_buffer(e, n.label.empty() ? "scores" : n.label, sem::Memory::Sbuf, n.dtype, {pt, w},
                       depth());
  if (auto no = copy_tile(e, n_loop, node, sum,
                          Tile{buf, window({{n_var, n_tile}}, n_tile), {pt, n_tile}}, "evacuate"))
    return no;
  nest.values[node] = {buf, w};
  return std::nullopt;
}

// run = combine(run * c, partial): one scalar_tensor_tensor (the step of the proved online split).
std::optional<NoProgram> Online::rescale(int block, int node, const Tile& run, const Tile& c,
                                         const Tile& partial, const std::string& combine) {
  const sem::InstrSpec* spec = e.target.isa.find("scalar_tensor_tensor");
  if (!spec)
    return NoProgram{
        fmt::format("target '{}' has no scalar_tensor_tensor to rescale with", e.target.name),
        node};
  ir::DType dt = e.kernel.nodes[node].dtype;
  Lowered<Inst*> made =
      make_inst(e, spec, {run.shape, c.shape, partial.shape}, run.shape, dt, {node, true});
  if (!made) return made.no_program();
  Inst& in = **made;
  in.attrs = {{"op0", std::string("mul")}, {"op1", combine}};
  in.in = {run.buffer, c.buffer, partial.buffer};
  in.in_window = {run.window, c.window, partial.window};
  in.out = run.buffer;
  in.out_window = run.window;
  if (e.plan.notes) in.note = fmt::format("rescaled {}", e.describe(node));
  e.builder.place(block, in);
  return std::nullopt;
}

// The tile's P.V: its K tiles of 128 accumulated in PSUM, folded into `acc`.
std::optional<NoProgram> Online::product(RowOps& run, const Tile& acc, const Tile& c) {
  const ir::Node& n = e.kernel.nodes[matmul];
  std::int64_t pt = nest.tiling.pt, N = cols(matmul), k_tile = 128;
  int y = n.inputs[1];
  if (!hbm_view(e, y)) return NoProgram{"an online matmul's right-hand side computed on chip"};
  int k_loop = nest_loop(e, run.block, "k", w / k_tile), k_var = loop_var(k_loop, run.block);
  std::vector<Place> at = rhs_places(e, nest, matmul, k_var, k_tile, {{}, N, 1});
  at[at.size() - 2].terms.push_back({nest.free_loop, w});
  Lowered<Tile> rhs = load(e, k_loop, y, at, {k_tile, N}, depth());
  if (!rhs) return rhs.no_program();
  Lowered<Tile> lhs = lhs_tile(e, nest, matmul, k_loop, -1, k_var, k_tile);
  if (!lhs) return lhs.no_program();
  int psum =
      add_buffer(e, "pv", sem::Memory::Psum, n.dtype, {pt, N}, {std::min(2, nest.tiling.bufs), 2});
  e.builder.buffer(psum).fills_psum = true;  // psum_depth.cpp
  Tile sum{psum, {}, {pt, N}};
  Lowered<Tile> pv = emit_lowering(e, k_loop, matmul, {*lhs, *rhs}, &sum, k_var, depth());
  if (!pv) return pv.no_program();
  e.fusable_load = -1;
  return rescale(run.block, matmul, acc, c, sum, "add");
}

std::optional<NoProgram> Online::emit() {
  if (auto no = classify()) return no;
  std::int64_t pt = nest.tiling.pt, N = matmul >= 0 ? cols(matmul) : 0;
  const ir::Node& stat = e.kernel.nodes[statistic];
  std::optional<double> identity = running_identity(stat);
  if (!identity) return NoProgram{fmt::format("'{}' has no running form", stat.op), statistic};
  Lowered<int> stat_run = running(statistic, 2, *identity);
  if (!stat_run) return stat_run.no_program();
  std::vector<std::pair<int, int>> runs;  // (reduction, its [rows, 2] running buffer)
  for (int r : reductions) {
    std::optional<double> start = running_identity(e.kernel.nodes[r]);
    std::optional<std::string> combine = combine_op(e.kernel.nodes[r]);
    if (!start || !combine) return NoProgram{"an online reduction without a running form", r};
    Lowered<int> buf = running(r, 2, *start);
    if (!buf) return buf.no_program();
    runs.push_back({r, *buf});
  }
  Lowered<int> acc = matmul >= 0 ? running(matmul, N, 0.0) : Lowered<int>(-1);
  if (!acc) return acc.no_program();
  // The strip's values the streamed row is made from, and the score matmuls' strip-long left
  // operands (q^T once per query block).
  RowOps strip_values{e, nest};
  strip_values.stores = false;
  for (int n : before)
    if (auto no = strip_values.emit(n)) return no;
  std::map<int, int> strip_lhs_of;
  for (int n : made) {
    if (!is_matmul(e.kernel.nodes[n])) continue;
    std::int64_t k_tile = largest_divisor(e.shape(e.kernel.nodes[n].inputs[0]).back(), 128);
    Lowered<int> lhs = strip_lhs(e, nest, n, k_tile, true);
    if (!lhs) return lhs.no_program();
    strip_lhs_of[n] = *lhs;
  }
  int new_buf = add_buffer(e, (stat.label.empty() ? stat.op : stat.label) + "_new",
                           sem::Memory::Sbuf, stat.dtype, {pt, 1}, depth());
  Window first = window({}, 1), second = window({}, 1);
  second.offset = 1;
  // The key tiles.
  int f = open_key_tiles();
  {
    RowOps tile{e, nest};
    tile.stores = false;
    Tile old_value{*stat_run, first, {pt, 1}}, new_value{new_buf, {}, {pt, 1}};
    for (int n : made)
      if (auto no =
              is_matmul(e.kernel.nodes[n]) ? score(tile, n, strip_lhs_of.at(n)) : tile.emit(n))
        return no;
    Lowered<std::vector<Tile>> operands = tile.operands_of(statistic);
    if (!operands) return operands.no_program();
    Depth d = depth();
    Tile stat_partial{*stat_run, second, {pt, 1}};
    if (auto p = emit_lowering(e, tile.block, statistic, *operands, &stat_partial, -1, d); !p)
      return p.no_program();
    const OpPick& pick = e.plan.picks.at(statistic);
    Tile both{*stat_run, window({}, 2), {pt, 2}};
    if (auto folded = emit_lowering(e, tile.block, statistic, {both}, &new_value, -1, d,
                                    pick.combine ? pick.combine : pick.lowering);
        !folded)
      return folded.no_program();
    Lowered<Tile> c = correction(tile, old_value, new_value);
    if (!c) return c.no_program();
    if (auto no = copy_tile(e, tile.block, statistic, new_value, old_value, "running")) return no;
    nest.values[statistic] = {new_buf, 1};
    for (int n : wide)
      if (auto no = tile.emit(n)) return no;
    for (auto [r, buf] : runs) {
      Lowered<std::vector<Tile>> in = tile.operands_of(r);
      if (!in) return in.no_program();
      Tile partial{buf, second, {pt, 1}};
      if (auto p = emit_lowering(e, tile.block, r, *in, &partial, -1, d); !p) return p.no_program();
      if (auto no = rescale(tile.block, r, Tile{buf, first, {pt, 1}}, *c, partial,
                            *combine_op(e.kernel.nodes[r])))
        return no;
    }
    if (matmul >= 0)
      if (auto no = product(tile, Tile{*acc, {}, {pt, N}}, *c)) return no;
    skip_masked(f);
  }
  close_key_tiles();
  nest.values.erase(statistic);
  bool read_after = std::any_of(tail.begin(), tail.end(), [&](int n) {
    const auto& in = e.kernel.nodes[n].inputs;
    return std::find(in.begin(), in.end(), statistic) != in.end();
  });
  if (read_after || !again.empty()) {  // the final statistic, for the tail and the second pass
    int value = add_buffer(e, (stat.label.empty() ? stat.op : stat.label) + "_final",
                           sem::Memory::Sbuf, stat.dtype, {pt, 1}, depth());
    Tile final_value{value, {}, {pt, 1}};
    if (auto no = copy_tile(e, strip_body, statistic, Tile{*stat_run, first, {pt, 1}}, final_value,
                            "final"))
      return no;
    nest.values[statistic] = {value, 1};
  }
  // The running values as the group's values, then the tail.
  RowOps strip{e, nest};
  for (auto [r, buf] : runs) {
    const ir::Node& n = e.kernel.nodes[r];
    int value = add_buffer(e, n.label.empty() ? "v" : n.label, sem::Memory::Sbuf, n.dtype, {pt, 1},
                           depth());
    Tile total{value, {}, {pt, 1}};
    if (auto no = copy_tile(e, strip.block, r, Tile{buf, first, {pt, 1}}, total, "total of"))
      return no;
    nest.values[r] = {value, 1};
    if (e.prefix.views[static_cast<std::size_t>(r)])
      if (auto no = store(e, strip.block, total, r, places(e, nest, r, e.shape(r), -1, 1)))
        return no;
  }
  if (matmul >= 0) {
    nest.values[matmul] = {*acc, N};
    if (e.prefix.views[static_cast<std::size_t>(matmul)])
      if (auto no = store(e, strip.block, Tile{*acc, {}, {pt, N}}, matmul,
                          places(e, nest, matmul, e.shape(matmul), -1, N)))
        return no;
  }
  for (int n : tail)
    if (auto no = strip.emit(n)) return no;
  if (again.empty()) return std::nullopt;
  // The second pass: each key tile's streamed value and wide values again, from the final
  // statistic, then the row-wide ops after the key tiles on them, stored tile by tile.
  open_key_tiles();
  {
    RowOps tile{e, nest};
    for (int n : made)
      if (auto no =
              is_matmul(e.kernel.nodes[n]) ? score(tile, n, strip_lhs_of.at(n)) : tile.emit(n))
        return no;
    for (int n : wide)
      if (auto no = tile.emit(n)) return no;
    for (int n : again)
      if (auto no = tile.emit(n)) return no;
  }
  close_key_tiles();
  return std::nullopt;
}

}  // namespace

std::optional<NoProgram> emit_online(Emission& e, Nest& nest) {
  if (!e.plan.online) return NoProgram{"an online tiling without the kernel's online splits"};
  Online o{e, nest};
  return o.emit();
}

}  // namespace ts::lower

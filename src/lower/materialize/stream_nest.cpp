// Streamed nests (issue 19; split_reduction.h): a group of row-wise ops whose free-axis
// reductions are split along free tiles of `tiling.free` columns, so that no row is ever whole
// on chip. Inside the strip loop, the group's ops in order:
//   - each reduction of a wide value: one pass over the free tiles that recomputes the values
//     its operand needs, tile by tile (from HBM and the per-row values known so far), reduces
//     the tile into the column beside the running statistic and folds the two with the
//     reduction's own lowering; the statistic starts at the reducer's identity;
//   - each per-row op (one column): at the strip level, once its operands are known;
//   - wide values: only on demand, never kept from one pass to the next.
// Then one pass recomputes the wide values read outside the group and stores them.
#include <fmt/format.h>

#include <set>

#include "emission.h"
#include "row_ops.h"
#include "tilesweep/lower/split_reduction.h"

namespace ts::lower {

namespace {

struct Streamer {
  Emission& e;
  Nest& nest;
  const std::vector<int>& nodes = e.plan.groups[nest.group];
  int strip_body = nest.body;
  std::int64_t row = 0;  // the streamed row's columns

  std::int64_t cols(int node) const {
    Frame f = e.frame(node);
    return f.col >= 0 ? e.shape(node)[f.col] : 1;
  }
  bool wide(int node) const { return cols(node) > 1; }
  bool in_group(int node) const {
    return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
  }
  bool splits(int node) const {
    return free_axis_reduction(e.kernel, node) && wide(e.kernel.nodes[node].inputs[0]);
  }

  std::optional<NoProgram> check();
  std::set<int> needed(const std::vector<int>& targets) const;
  std::optional<NoProgram> pass(const std::vector<int>& targets, int reduction);
  Lowered<Tile> start_running(int reduction);
  std::optional<NoProgram> fold(RowOps& run, int reduction, const Tile& running);
  std::optional<NoProgram> finish_running(int reduction, const Tile& running);
  std::optional<NoProgram> run();
};

// Every wide value of the group spans the streamed row; every op with an axis is a free-axis
// reduction with a lowering that folds.
std::optional<NoProgram> Streamer::check() {
  if (nest.tiling.block != 1) return NoProgram{"a streamed nest of more than one row tile"};
  for (int n : nodes) {
    if (splits(n)) row = std::max(row, cols(e.kernel.nodes[n].inputs[0]));
    if (e.prefix.has_axis[static_cast<std::size_t>(n)] && !free_axis_reduction(e.kernel, n))
      return NoProgram{fmt::format("'{}' in a streamed nest", e.kernel.nodes[n].op), n};
  }
  for (int n : nodes)
    for (int in : e.kernel.nodes[n].inputs)
      if ((wide(n) && cols(n) != row) || (wide(in) && cols(in) != row && !e.constant(in)))
        return NoProgram{fmt::format("rows of {} and {} columns in one streamed nest", row,
                                     std::max(cols(n), cols(in))),
                         n};
  if (row <= nest.tiling.free || row % nest.tiling.free)
    throw InternalError(fmt::format("streamed tile {} for rows of {}", nest.tiling.free, row));
  return std::nullopt;
}

// The wide values of the group the targets need, recomputed in one pass (targets included).
std::set<int> Streamer::needed(const std::vector<int>& targets) const {
  RowOps reader{e, nest};
  std::set<int> out;
  std::vector<int> stack = targets;
  while (!stack.empty()) {
    int n = stack.back();
    stack.pop_back();
    if (!out.insert(n).second) continue;
    for (auto [r, i] : reader.reads(n)) {
      int in = e.kernel.nodes[r].inputs[static_cast<std::size_t>(i)];
      if (in_group(in) && wide(in) && !nest.values.count(in)) stack.push_back(in);
    }
  }
  return out;
}

std::optional<NoProgram> Streamer::run() {
  if (auto no = check()) return no;
  std::vector<int> outputs;
  for (int n : nodes) {
    if (e.plan.absorbed.count(n)) continue;
    if (splits(n)) {
      if (auto no = pass({n}, n)) return no;
    } else if (!wide(n)) {
      RowOps strip{e, nest};
      if (auto no = strip.emit(n)) return no;
    } else if (e.prefix.views[static_cast<std::size_t>(n)]) {
      outputs.push_back(n);
    }
  }
  return outputs.empty() ? std::nullopt : pass(outputs, -1);
}

// One loop over the free tiles computing `targets` (and what they need); a reduction's pass
// folds each tile into its running statistic, the last pass stores the values.
std::optional<NoProgram> Streamer::pass(const std::vector<int>& targets, int reduction) {
  std::optional<Tile> running;
  if (reduction >= 0) {
    Lowered<Tile> started = start_running(reduction);
    if (!started) return started.no_program();
    running = *started;
  }
  std::set<int> work = needed(reduction >= 0 ? e.kernel.nodes[reduction].inputs : targets);
  if (reduction >= 0) work.erase(reduction);
  int f = nest_loop(e, strip_body, "f", row / nest.tiling.free);
  nest.free_loop = loop_var(f, strip_body);
  nest.free_tile = nest.tiling.free;
  nest.body = f;
  {
    RowOps tile{e, nest};
    tile.stores = reduction < 0;
    for (int n : nodes)
      if (work.count(n) && !e.plan.absorbed.count(n))
        if (auto no = tile.emit(n)) return no;
    if (reduction >= 0)
      if (auto no = fold(tile, reduction, *running)) return no;
  }
  std::erase_if(nest.values, [&](const auto& v) { return wide(v.first); });
  nest.free_loop = -1;
  nest.free_tile = 0;
  nest.body = strip_body;
  return reduction >= 0 ? finish_running(reduction, *running) : std::nullopt;
}

// The running statistic of `reduction` for the strip: column 0 of a [P, 2] buffer (column 1
// takes each tile's partial), set to the reducer's identity before the tiles.
Lowered<Tile> Streamer::start_running(int reduction) {
  const ir::Node& n = e.kernel.nodes[reduction];
  std::optional<double> identity = running_identity(n);
  if (!identity) return NoProgram{fmt::format("'{}' has no running form", n.op), reduction};
  std::int64_t pt = nest.tiling.pt;
  int buf = add_buffer(e, (n.label.empty() ? n.op : n.label) + "_run", sem::Memory::Sbuf, n.dtype,
                       {pt, 2}, nest.strip_depth());
  Lowered<Inst*> made = make_inst(e, Common::Memset, {}, {pt, 1}, n.dtype, {reduction, true});
  if (!made) return made.no_program();
  Inst& in = **made;
  in.out = buf;
  in.out_window = window({}, 1);
  in.attrs = {{"value", *identity}, {"P", sem::Dim(pt)}, {"F", sem::Dim(1)}};
  if (e.plan.notes)
    in.note = fmt::format("running {} starts at {}", e.describe(reduction), *identity);
  e.builder.place(strip_body, in);
  return Tile{buf, window({}, 1), {pt, 1}};
}

// The tile's partial reduction into column 1, then the reduction's own lowering over both
// columns into column 0: running = op([running, op(tile)]).
std::optional<NoProgram> Streamer::fold(RowOps& run, int reduction, const Tile& running) {
  if (e.prefix.reads_mask[static_cast<std::size_t>(reduction)])
    return NoProgram{"a streamed reduction reading a mask is not placed yet", reduction};
  Lowered<std::vector<Tile>> operands = run.operands_of(reduction);
  if (!operands) return operands.no_program();
  std::int64_t pt = nest.tiling.pt;
  Window second = window({}, 1);
  second.offset = 1;
  Tile partial{running.buffer, second, {pt, 1}};
  Depth depth = nest.strip_depth();
  Lowered<Tile> reduced = emit_lowering(e, run.block, reduction, *operands, &partial, -1, depth);
  if (!reduced) return reduced.no_program();
  const OpPick& pick = e.plan.picks.at(reduction);
  bool fused = e.plan.fused_operands.count(reduction) ||
               std::any_of(e.plan.absorbed.begin(), e.plan.absorbed.end(),
                           [&](const auto& a) { return a.second == reduction; });
  const ir::Kernel* own = fused ? pick.combine : pick.lowering;
  if (!own)
    return NoProgram{fmt::format("streamed '{}' fused with its producer has no lowering of its own",
                                 e.kernel.nodes[reduction].op),
                     reduction};
  Tile both{running.buffer, window({}, 2), {pt, 2}};
  const std::size_t first = e.builder.program().insts.size();
  Lowered<Tile> folded = emit_lowering(e, run.block, reduction, {both}, &running, -1, depth, own);
  if (!folded) return folded.no_program();
  for (std::size_t i = first; i < e.builder.program().insts.size(); ++i)
    e.builder.program().insts[i].fold = true;
  return std::nullopt;
}

// The statistic as the group's per-row value (a [P, 1] copy), stored when read outside.
std::optional<NoProgram> Streamer::finish_running(int reduction, const Tile& running) {
  const ir::Node& n = e.kernel.nodes[reduction];
  std::int64_t pt = nest.tiling.pt;
  int buf = add_buffer(e, n.label.empty() ? "v" : n.label, sem::Memory::Sbuf, n.dtype, {pt, 1},
                       nest.strip_depth());
  Tile value{buf, {}, {pt, 1}};
  if (auto no = copy_tile(e, strip_body, reduction, running, value, "total of")) return no;
  nest.values[reduction] = {buf, 1};
  if (!e.prefix.views[static_cast<std::size_t>(reduction)]) return std::nullopt;
  return store(e, strip_body, value, reduction,
               places(e, nest, reduction, e.shape(reduction), -1, 1));
}

}  // namespace

bool streams(const Emission& e, const Nest& nest) {
  return streamed(e.kernel, e.plan.groups[nest.group], nest.tiling);
}

std::optional<NoProgram> emit_streamed(Emission& e, Nest& nest) {
  nest.streamed = true;
  Streamer s{e, nest};
  return s.run();
}

}  // namespace ts::lower

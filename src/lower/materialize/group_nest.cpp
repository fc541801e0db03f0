// Loop nests per fused group (contract, Axon §4.3): the group's batch loops, then the strip loop
// over row blocks of `pt * block` rows (and, in a purely element-wise group that tiles the free
// dim, the free-tile loop); inside it the group's ops in order — runs of row-wise ops (element-
// wise ops and reductions along the free dim, on whole-row tiles) here, each matmul by
// matmul_nest.cpp, a swap site's values by transposed_nest.cpp once something reads them. Values
// the group keeps stay on chip; values used outside it are stored to HBM.
#include <fmt/format.h>

#include <limits>
#include <numeric>

#include "emission.h"
#include "extent_of.h"
#include "row_ops.h"
#include "tilesweep/lower/tile_op.h"

namespace ts::lower {

namespace {

// The rank of the loops node `m` runs in: its frame's, or for a reduction along a batch dim
// its operand's (the reduced dim is one of the nest's loops).
int loop_rank(const Emission& e, int m) {
  if (reduces_batch(e.kernel, m))
    return static_cast<int>(e.shape(e.kernel.nodes[m].inputs[0]).size());
  return e.frame(m).rank;
}

// The repeat count of batch dim `d` (extent `n`) among the HBM operands of a group's nodes: 1
// when none repeats it, or the repeats do not divide it (a sliced repeated dim: its operands'
// accesses then repeat on their own, Access::repeat).
std::int64_t batch_repeat(const Emission& e, const std::vector<int>& nodes, int d, std::int64_t n) {
  std::int64_t repeat = 1;
  for (int m : nodes)
    for (int in : e.kernel.nodes[m].inputs) {
      const auto& view = e.prefix.views[static_cast<std::size_t>(in)];
      if (!view) continue;
      // The operand's dim under output dim d (right-aligned).
      int od = d + static_cast<int>(view->dims.size()) - loop_rank(e, m);
      if (od >= 0 && od < static_cast<int>(view->dims.size()))
        repeat = std::lcm(repeat, view->dims[od].repeat);
    }
  return n % repeat ? 1 : repeat;
}

// The batch dims the group's loops iterate (a shape, its batch dims first, and their count):
// its node with the most, a batch reduction counted by its operand.
std::pair<std::vector<std::int64_t>, int> batch_dims_of(const Emission& e,
                                                        const std::vector<int>& nodes) {
  std::pair<std::vector<std::int64_t>, int> best = {{}, -1};
  for (int m : nodes) {
    int at = m;
    Frame f = e.frame(m);
    if (reduces_batch(e.kernel, m)) {
      at = e.kernel.nodes[m].inputs[0];
      int rank = static_cast<int>(e.shape(at).size());
      f = Frame{rank, rank - 2, rank - 1};
    }
    int n = f.row >= 0 ? f.row : (f.col >= 0 ? f.col : f.rank);
    // (Of two nodes with as many batch dims, the one that is not broadcast along one: fusion.cpp.)
    auto extent = [&](const std::vector<std::int64_t>& shape) {
      return std::accumulate(shape.begin(), shape.begin() + n, std::int64_t{1},
                             std::multiplies<>());
    };
    if (n > best.second || (n == best.second && extent(e.shape(at)) > extent(best.first)))
      best = {e.shape(at), n};
  }
  return best;
}

// Batch loop `d` of the nest (two loops where an operand repeats the dim) in `body`; returns
// the innermost.
Lowered<int> batch_loop(Emission& e, Nest& nest, int body, int d, std::int64_t extent) {
  // A batch dim some operand repeats runs as two loops, the inner one over the repeats, so
  // that the repeated operand's index is the outer loop's alone.
  std::int64_t repeat = batch_repeat(e, e.plan.groups[nest.group], d, extent);
  int outer = nest_loop(e, body, "b" + std::to_string(d), extent / repeat);
  int inner = nest_loop(e, outer, "b" + std::to_string(d) + "i", repeat);
  nest.batch.push_back({{loop_var(outer, body), repeat}, {loop_var(inner, outer), 1}});
  return inner;
}

// The loops around a group's ops: batch loops, the strip loop, the free-tile loop; with a
// reduction along a batch dim, that dim's loop inside the strip loop.
Lowered<Nest> open_nest(Emission& e, int group) {
  const auto& nodes = e.plan.groups[group];
  Nest nest;
  nest.group = group;
  nest.tiling = e.plan.tiling.at(group);
  GroupExtent extent = extent_of(
      e.kernel, nodes, [&](int n) -> const std::vector<std::int64_t>& { return e.shape(n); },
      [&](int n) { return e.frame(n); });
  auto [shape, batch_dims] = batch_dims_of(e, nodes);
  bool carries =
      std::any_of(nodes.begin(), nodes.end(), [&](int m) { return reduces_batch(e.kernel, m); });
  int body = 0;
  for (int d = 0; d < batch_dims - (carries ? 1 : 0); ++d) {
    Lowered<int> inner = batch_loop(e, nest, body, d, shape[d]);
    if (!inner) return inner.no_program();
    body = *inner;
  }
  if (extent.rows % nest.strip_rows() != 0)
    throw InternalError(fmt::format("tiling {} x {} does not divide {} rows", nest.tiling.pt,
                                    nest.tiling.block, extent.rows));
  if (nest.tiling.resident)  // the matmuls' right-hand sides, once for every strip
    if (auto no = load_resident_rhs(e, nest, body)) return *no;
  int strip = nest_loop(e, body, "r", extent.rows / nest.strip_rows());
  nest.strip = loop_var(strip, body);
  nest.body = strip;
  if (carries) {
    nest.carry = strip;
    nest.carried = e.builder.program().blocks[static_cast<std::size_t>(strip)].items.size();
    Lowered<int> inner = batch_loop(e, nest, strip, batch_dims - 1, shape[batch_dims - 1]);
    if (!inner) return inner.no_program();
    nest.body = *inner;
  }
  if ((extent.elementwise || extent.chunkable) && !extent.has_matmul && nest.tiling.free > 0 &&
      nest.tiling.free < extent.cols) {
    if (extent.chunkable && !extent.elementwise) {  // a chunked scan's state starts before
      nest.chunk_block = nest.body;
      nest.chunk_at = e.builder.program().blocks[static_cast<std::size_t>(nest.body)].items.size();
    }
    nest.free_tile = nest.tiling.free;
    int free = nest_loop(e, nest.body, "f", extent.cols / nest.free_tile);
    nest.free_loop = loop_var(free, nest.body);
    nest.body = free;
  }
  return nest;
}

// The group's element-wise values broadcast along the batch dim its nest carries a reduction over
// (fusion.cpp: a 1 there, or no such dim): the same in every trip of the loop over it.
std::vector<int> broadcast_values(const Emission& e, const Nest& nest) {
  std::vector<int> out;
  if (nest.carry < 0) return out;
  const auto& nodes = e.plan.groups[nest.group];
  auto [shape, batch_dims] = batch_dims_of(e, nodes);
  int carried = batch_dims - 1, rank = static_cast<int>(shape.size());
  if (carried < 0 || shape[static_cast<std::size_t>(carried)] <= 1) return out;  // one trip
  for (int n : nodes) {
    const ir::Node& node = e.kernel.nodes[n];
    if (is_matmul(node) || e.is_transposed(n) || reduces_batch(e.kernel, n) ||
        e.prefix.has_axis[static_cast<std::size_t>(n)] || e.plan.absorbed.count(n))
      continue;
    const auto& s = e.shape(n);
    int d = carried - (rank - static_cast<int>(s.size()));
    if (d < 0 || s[static_cast<std::size_t>(d)] == 1) out.push_back(n);
  }
  return out;
}

// `values` (broadcast_values) computed once per strip, before the carried loop, and kept for
// all of its trips (never a reused buffer, never written over): whole rows, read a free tile at a
// time where the nest tiles its rows (RowOps::operand). `values` is emptied where there is no loop
// to hoist them out of: they are then emitted in place like any other.
std::optional<NoProgram> hoist(Emission& e, Nest& nest, std::vector<int>& values) {
  if (values.empty()) return std::nullopt;
  auto block = [&](int b) -> Block& {
    return e.builder.program().blocks[static_cast<std::size_t>(b)];
  };
  int loop = nest.body;  // the carried loop: the block around the body just inside `carry`
  while (loop > 0 && block(loop).parent != nest.carry) loop = block(loop).parent;
  if (loop <= 0 || loop == nest.carry) {  // no loop over the dim
    values.clear();
    return std::nullopt;
  }
  Nest inside = nest;
  nest.body = nest.carry;
  nest.free_loop = -1;
  nest.free_tile = 0;
  for (int n : values)
    if (!nest.last_read.empty()) nest.last_read[n] = std::numeric_limits<std::size_t>::max();
  RowOps run{e, nest};
  for (int n : values)
    if (auto no = run.emit(n)) return no;
  nest.body = inside.body;
  nest.free_loop = inside.free_loop;
  nest.free_tile = inside.free_tile;
  // What the run appended after the carried loop, moved before it (constants a run makes may go
  // elsewhere in the block: the loop is found by its block).
  std::vector<Item>& items = block(nest.carry).items;
  auto at =
      std::find_if(items.begin(), items.end(), [&](const Item& i) { return i.block == loop; });
  std::vector<Item> moved(at + 1, items.end());
  items.erase(at + 1, items.end());
  at = std::find_if(items.begin(), items.end(), [&](const Item& i) { return i.block == loop; });
  items.insert(at, moved.begin(), moved.end());
  nest.carried = static_cast<std::size_t>(
      std::find_if(items.begin(), items.end(), [&](const Item& i) { return i.block == loop; }) -
      items.begin());
  return std::nullopt;
}

}  // namespace

// Operand `i` of `source` (the op whose operands a node reads: itself, or the producer fused into
// it).
Lowered<Tile> RowOps::operand(int source, std::size_t i, ir::DType dtype) {
  int in = e.kernel.nodes[source].inputs[i];
  Role role = e.prefix.roles[static_cast<std::size_t>(source)][i];
  std::int64_t width = in_cols(source, in);
  Shape tile = {nest.tiling.pt, role == Role::Broadcast && width == 1 ? 1 : width};
  // A reduction across partitions reads every row of its operand at once.
  Lowered<std::int64_t> reduced = rows_reduced(source, in);
  if (!reduced) return reduced.no_program();
  std::int64_t all_rows = *reduced;
  if (all_rows) tile[0] = all_rows;
  if (e.constant(in)) {
    Lowered<int> buffer = constant_tile(e, *e.constant(in), tile, dtype);
    if (!buffer) return buffer.no_program();
    return Tile{*buffer, {}, tile};
  }
  if (auto v = nest.values.find(in); v != nest.values.end()) {
    if (nest.free_tile > 0 && v->second.cols > nest.free_tile)  // a hoisted whole row
      return Tile{v->second.buffer,
                  row_window(nest, row_tile, v->second.cols, {{nest.free_loop, nest.free_tile}},
                             nest.free_tile),
                  {nest.tiling.pt, nest.free_tile}};
    return Tile{v->second.buffer,
                row_window(nest, row_tile, v->second.cols),
                {nest.tiling.pt, v->second.cols}};
  }
  auto it = loaded.find(in);
  if (it == loaded.end()) {
    // A reduction's input is placed in its own frame ([.., rows, cols]); an element-wise
    // operand under the output's.
    const auto& shape = e.shape(in);
    int rank = static_cast<int>(shape.size());
    auto at = e.prefix.has_axis[static_cast<std::size_t>(source)]
                  ? places(nest, Frame{rank, rank - 2, rank - 1}, shape, shape, row_tile, width)
                  : places(e, nest, source, shape, row_tile, width);
    if (all_rows) at[at.size() - 2] = Place{{}, all_rows, 0};
    if (nest.tiling.onchip_steps)
      if (auto strided = load_steps_on_chip(e, block, in, at, tile, nest.strip_depth(), regions)) {
        if (!*strided) return strided->no_program();
        return loaded.emplace(in, **strided).first->second;
      }
    Lowered<Tile> tile_loaded =
        nest.tiling.pe_broadcast && !all_rows && broadcast_across_partitions(at, tile)
            ? load_broadcast_on_pe(e, block, in, at, tile, nest.strip_depth())
            : load(e, block, in, at, tile, nest.strip_depth());
    if (!tile_loaded) return tile_loaded.no_program();
    it = loaded.emplace(in, *tile_loaded).first;
  }
  return it->second;
}

std::vector<std::pair<int, int>> RowOps::reads(int node) const {
  // An element-wise region's root reads the region's operands (each through its reader).
  if (auto r = e.plan.fused_operands.find(node); r != e.plan.fused_operands.end()) return r->second;
  // A reduction fused with its producer reads the producer's operands.
  int source = node;
  for (const auto& [producer, consumer] : e.plan.absorbed)
    if (consumer == node) source = producer;
  std::vector<std::pair<int, int>> out;
  if (e.prefix.reads_mask[static_cast<std::size_t>(source)]) {
    for (int i : tile_operands(e.kernel, source)) out.push_back({source, i});
  } else {
    for (std::size_t i = 0; i < e.kernel.nodes[source].inputs.size(); ++i)
      out.push_back({source, static_cast<int>(i)});
  }
  return out;
}

Lowered<std::vector<Tile>> RowOps::operands_of(int node) {
  const ir::Node& n = e.kernel.nodes[node];
  std::vector<std::pair<int, int>> read = reads(node);
  bool absorbs = !e.plan.fused_operands.count(node) && !read.empty() && read[0].first != node;
  if (absorbs && e.prefix.reduces_rows[static_cast<std::size_t>(node)])
    return NoProgram{
        fmt::format("'{}' across partitions fused with its producer is not placed yet", n.op),
        node};
  std::vector<Tile> operands;
  operands.reserve(read.size());
  for (auto [reader, i] : read) {
    Lowered<Tile> tile = operand(reader, static_cast<std::size_t>(i), n.dtype);
    if (!tile) return tile.no_program();
    operands.push_back(std::move(*tile));
  }
  return operands;
}

std::optional<NoProgram> RowOps::emit(int node) {
  if (e.plan.absorbed.count(node))
    return std::nullopt;  // lowered with its reduction, as one instruction
  if (reduces_batch(e.kernel, node)) return carry(node);
  if (chunks(node)) return chunk(node);
  const ir::Node& n = e.kernel.nodes[node];
  std::int64_t out_cols = cols_of(node);
  Lowered<std::vector<Tile>> operands = operands_of(node);
  if (!operands) return operands.no_program();
  Shape form = {nest.tiling.pt, nest.tiling.block * out_cols};
  Tile dest{-1, row_window(nest, row_tile, out_cols), {nest.tiling.pt, out_cols}};
  if (partial_in_psum(node)) {
    if (auto over = in_place_dest(node, *operands, n.dtype, form, dest, sem::Memory::Psum))
      dest = *over;
    else
      dest.buffer = value_buffer(e, nest, n.label.empty() ? "v" : n.label, sem::Memory::Psum,
                                 n.dtype, form, nest.strip_depth());
  } else if (auto over = in_place_dest(node, *operands, n.dtype, form, dest))
    dest = *over;
  else
    dest.buffer = value_buffer(e, nest, n.label.empty() ? "v" : n.label, sem::Memory::Sbuf, n.dtype,
                               form, nest.strip_depth());
  int buf = dest.buffer;
  // (an op reading a mask needs where its tile starts)
  Frame f = e.frame(node);
  if (e.prefix.reads_mask[static_cast<std::size_t>(node)] && f.row >= 0 && f.col >= 0) {
    auto at = places(e, nest, node, e.shape(node), row_tile, out_cols);
    e.origin = {at[static_cast<std::size_t>(f.row)].terms,
                at[static_cast<std::size_t>(f.col)].terms};
  }
  Lowered<Tile> out = emit_lowering(e, block, node, *operands, &dest, -1, nest.strip_depth());
  e.origin.reset();
  if (!out) return out.no_program();
  nest.values[node] = {buf, out_cols};
  if (!stores || !e.prefix.views[static_cast<std::size_t>(node)]) return std::nullopt;
  return store(e, block, *out, node, places(e, nest, node, e.shape(node), row_tile, out_cols));
}

std::optional<NoProgram> emit_group(Emission& e, int group) {
  e.nest = group;
  const auto& nodes = e.plan.groups[group];
  Lowered<Nest> opened = open_nest(e, group);
  if (!opened) return opened.no_program();
  Nest& nest = *opened;
  if (streams(e, nest)) return emit_streamed(e, nest);
  if (nest.tiling.online > 0) return emit_online(e, nest);
  plan_reuse(e, nest);
  std::vector<int> hoisted = broadcast_values(e, nest);
  if (auto no = hoist(e, nest, hoisted)) return no;
  auto was_hoisted = [&](int node) { return std::count(hoisted.begin(), hoisted.end(), node) > 0; };
  // A swap site's values wait until something reads them (only the site's consumer does),
  // then run together in one loop over their chunks.
  std::vector<int> pending;
  auto reads_pending = [&](int node) {
    const auto& in = e.kernel.nodes[node].inputs;
    return std::any_of(in.begin(), in.end(),
                       [&](int x) { return std::count(pending.begin(), pending.end(), x) > 0; });
  };
  auto row_wise = [&](int node) {
    return !is_matmul(e.kernel.nodes[node]) && !e.is_transposed(node);
  };
  std::size_t i = 0;
  while (i < nodes.size()) {
    int node = nodes[i];
    if (was_hoisted(node)) {
      ++i;
      continue;
    }
    if (e.is_transposed(node)) {
      pending.push_back(node);
      ++i;
      continue;
    }
    if (!pending.empty() && reads_pending(node)) {
      if (auto no = emit_transposed(e, nest, pending)) return no;
      pending.clear();
    }
    if (is_matmul(e.kernel.nodes[node])) {
      if (auto no = emit_matmul(e, nest, nodes[i])) return no;
      release_read(nest, i++);
      continue;
    }
    RowOps run{e, nest};
    std::size_t j = i;
    for (; j < nodes.size() && row_wise(nodes[j]) && (j == i || !reads_pending(nodes[j])); ++j) {
      if (was_hoisted(nodes[j])) continue;
      if (auto no = run.emit(nodes[j])) return no;
      release_read(nest, j);
    }
    i = j;
  }
  if (!pending.empty())
    if (auto no = emit_transposed(e, nest, pending)) return no;
  skip_masked_tiles(e, nest);
  return std::nullopt;
}

}  // namespace ts::lower

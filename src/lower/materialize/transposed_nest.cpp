// A swap site's values computed on transposed tiles (contract, layout_swap.h): the strip's x^T
// is built once per K tile by the producers' `pre` program (shared by producers reading the same
// x through the same pre), then one loop over chunks of 128 of N runs, per chunk, each producer
// ([128 of N, strip rows] = the fused root instruction over x^T and y, accumulated in PSUM) and
// the element-wise chain in order. The consumer reads the chunks as its K tiles: no transpose.
// With panel loads (GroupTiling::panel) the chunk loop runs inside a loop over panels of W
// columns, and each producer's right-hand side is loaded per panel, [K tile, W] per K tile, before
// the panel's chunks read windows of it.
#include <fmt/format.h>

#include "emission.h"
#include "tilesweep/ir/graph_edit.h"

namespace ts::lower {

namespace {

// A swap site's loop over its chunks of `tile` columns: one loop over N / tile, or one per panel
// inside a loop over panels (GroupTiling::panel).
struct ChunkLoop {
  int block = -1;             // where a chunk's instructions go
  int var = -1;               // the chunk's loop variable (within its panel; -1: one trip)
  Terms at;                   // the chunk's index, in chunks
  std::int64_t tile = 0;      // columns per chunk
  std::int64_t panel = 0;     // columns per panel (0: no panels)
  std::map<int, int> panels;  // a right-hand side -> its panel buffer
};

Terms scaled(const Terms& terms, std::int64_t by) {
  Terms out;
  for (const auto& [var, coefficient] : terms) out.push_back({var, coefficient * by});
  return out;
}

// The strip's x^T for transposed matmul `node`, built by the pick's `pre` (hoisted_lhs.cpp).
Lowered<int> transposed_lhs(Emission& e, Nest& nest, int node, std::int64_t k_tile) {
  const ir::Kernel* pre = e.plan.picks.at(node).pre;
  if (!pre) throw InternalError(fmt::format("transposed matmul {} has no pre program", node));
  return hoisted_lhs(e, nest, node, k_tile, *pre, {});
}

// Matmul `node`'s right-hand side tile [k_tile, chunk] for K tile `k_var`: a window of its panel,
// or loaded per chunk and K tile.
Lowered<Tile> chunk_rhs(Emission& e, const Nest& nest, int node, const ChunkLoop& chunks,
                        int k_loop, int k_var, std::int64_t k_tile) {
  auto panel = chunks.panels.find(e.kernel.nodes[node].inputs[1]);
  if (panel == chunks.panels.end())
    return load_rhs(e, nest, node, k_loop, k_var, k_tile, scaled(chunks.at, chunks.tile),
                    chunks.tile);
  return Tile{panel->second,
              window({{k_var, chunks.panel}, {chunks.var, chunks.tile}}, chunks.tile),
              {k_tile, chunks.tile}};
}

// A producer's chunk [n_tile, S] = fused root(x^T, y) accumulated over K in PSUM (one
// instruction per row tile), evacuated into `dest`.
std::optional<NoProgram> emit_transposed_matmul(Emission& e, Nest& nest, int node,
                                                const ChunkLoop& chunks, const Tile& dest) {
  const ir::Node& n = e.kernel.nodes[node];
  std::int64_t K = e.shape(n.inputs[0]).back();
  std::int64_t k_tile = largest_divisor(K, 128), n_tile = dest.shape[0], S = nest.strip_rows(),
               rows = nest.tiling.pt;
  Lowered<int> x_transposed = transposed_lhs(e, nest, node, k_tile);
  if (!x_transposed) return x_transposed.no_program();
  int k_loop = nest_loop(e, chunks.block, "k", K / k_tile), k_var = loop_var(k_loop, chunks.block);
  Lowered<Tile> rhs = chunk_rhs(e, nest, node, chunks, k_loop, k_var, k_tile);
  if (!rhs) return rhs.no_program();
  int rows_loop = nest_loop(e, k_loop, "rt", nest.tiling.block),
      row_tile = loop_var(rows_loop, k_loop);
  int accumulator = add_buffer(e, "acc", sem::Memory::Psum, n.dtype, {n_tile, S},
                               {std::min(2, nest.tiling.bufs), 2});
  e.builder.buffer(accumulator).fills_psum = true;  // psum_depth.cpp
  Tile lhs{*x_transposed, window({{k_var, S}, {row_tile, rows}}, rows), {k_tile, rows}};
  Tile sum{accumulator, window({{row_tile, rows}}, rows), {n_tile, rows}};
  Lowered<Tile> product =
      emit_lowering(e, rows_loop, node, {lhs, *rhs}, &sum, k_var, nest.strip_depth());
  if (!product) return product.no_program();
  return copy_tile(e, chunks.block, node, Tile{accumulator, Window{}, {n_tile, S}}, dest,
                   "evacuate", " (transposed)");
}

// An element-wise op of a swap site's chain on one chunk [n_tile, S] of its transposed operands.
std::optional<NoProgram> emit_transposed_op(Emission& e, Nest& nest, int node,
                                            const ChunkLoop& chunks, const Tile& dest) {
  const ir::Node& n = e.kernel.nodes[node];
  std::int64_t n_tile = dest.shape[0], S = nest.strip_rows();
  std::vector<Tile> operands;
  for (int in : n.inputs) {
    if (e.constant(in)) {
      Lowered<int> buffer = constant_tile(e, *e.constant(in), {n_tile, 1}, n.dtype);
      if (!buffer) return buffer.no_program();
      operands.push_back({*buffer, {}, {n_tile, 1}});
    } else if (auto it = nest.transposed.find(in); it != nest.transposed.end()) {
      operands.push_back({it->second.buffer,
                          it->second.whole ? window(scaled(chunks.at, S), S) : Window{},
                          {n_tile, S}});
    } else if (auto scalar = nest.scalars.find(in); scalar != nest.scalars.end()) {
      operands.push_back(scalar->second);
    } else {
      return NoProgram{fmt::format("'{}' computed transposed reads a value that is not", n.op),
                       node};
    }
  }
  Lowered<Tile> result =
      emit_lowering(e, chunks.block, node, operands, &dest, -1, nest.strip_depth());
  if (!result) return result.no_program();
  return std::nullopt;
}

bool all_ones(const std::vector<std::int64_t>& shape) {
  return std::all_of(shape.begin(), shape.end(), [](std::int64_t d) { return d == 1; });
}

// Before the chunk loop: each producer's x^T, and the scalar operands, broadcast down the
// partitions, loaded once per strip.
std::optional<NoProgram> before_chunks(Emission& e, Nest& nest, const std::vector<int>& nodes,
                                       std::int64_t N, std::int64_t n_tile) {
  for (int node : nodes) {
    const ir::Node& n = e.kernel.nodes[node];
    if (e.shape(node).back() != N)
      return NoProgram{"values of a swap site with different columns", node};
    if (is_matmul(n))
      if (auto x = transposed_lhs(e, nest, node, largest_divisor(e.shape(n.inputs[0]).back(), 128));
          !x)
        return x.no_program();
    for (int in : n.inputs) {
      if (e.constant(in) || !hbm_view(e, in) || nest.scalars.count(in) || !all_ones(e.shape(in)))
        continue;
      Lowered<Tile> scalar = load(e, nest.body, in, std::vector<Place>(e.shape(in).size()),
                                  {n_tile, 1}, nest.strip_depth());
      if (!scalar) return scalar.no_program();
      nest.scalars.emplace(in, *scalar);
    }
  }
  return std::nullopt;
}

// Each producer's right-hand side loaded in panels (GroupTiling::panel) of the chunk loop's
// width, in `block`, the panel loop's body (variable `panel_var`).
std::optional<NoProgram> load_panels(Emission& e, Nest& nest, const std::vector<int>& nodes,
                                     int block, int panel_var, ChunkLoop& chunks) {
  for (int node : nodes) {
    if (!is_matmul(e.kernel.nodes[node]) || !loads_rhs_panel(e, nest, node)) continue;
    int y = e.kernel.nodes[node].inputs[1];
    if (chunks.panels.count(y)) continue;
    e.current_node = node;
    Lowered<int> buf =
        load_rhs_panel(e, nest, node, block, {{panel_var, chunks.panel}}, chunks.panel);
    if (!buf) return buf.no_program();
    chunks.panels[y] = *buf;
  }
  return std::nullopt;
}

// The chunk loop of `nodes` over N columns in chunks of `n_tile`, in panels where the tiling
// asks for them and a panel holds more than one chunk.
Lowered<ChunkLoop> open_chunks(Emission& e, Nest& nest, const std::vector<int>& nodes,
                               std::int64_t N, std::int64_t n_tile) {
  ChunkLoop chunks;
  chunks.tile = n_tile;
  std::int64_t W = nest.tiling.panel ? rhs_panel_columns(N) : n_tile;
  if (W <= n_tile || N % W) {
    chunks.block = nest_loop(e, nest.body, "n", N / n_tile);
    chunks.var = loop_var(chunks.block, nest.body);
    chunks.at = {{chunks.var, 1}};
    return chunks;
  }
  chunks.panel = W;
  int panel_loop = nest_loop(e, nest.body, "p", N / W), panel_var = loop_var(panel_loop, nest.body);
  if (auto no = load_panels(e, nest, nodes, panel_loop, panel_var, chunks)) return *no;
  chunks.block = nest_loop(e, panel_loop, "n", W / n_tile);
  chunks.var = loop_var(chunks.block, panel_loop);
  chunks.at = {{panel_var, W / n_tile}, {chunks.var, 1}};
  return chunks;
}

}  // namespace

std::optional<NoProgram> emit_transposed(Emission& e, Nest& nest, const std::vector<int>& nodes) {
  std::int64_t N = e.shape(nodes.front()).back(), n_tile = largest_divisor(N, 128);
  if (auto no = before_chunks(e, nest, nodes, N, n_tile)) return no;
  Lowered<ChunkLoop> opened = open_chunks(e, nest, nodes, N, n_tile);
  if (!opened) return opened.no_program();
  const ChunkLoop& chunks = *opened;
  for (int node : nodes) {
    // Only what a later nest or the consumer reads keeps every chunk.
    bool whole = false;
    for (int m : e.plan.groups[nest.group])
      for (int in : e.kernel.nodes[m].inputs) whole = whole || (in == node && !e.is_transposed(m));
    std::int64_t S = nest.strip_rows();
    const ir::Node& n = e.kernel.nodes[node];
    const std::string name = n.label.empty() ? "vT" : n.label;
    int buf =
        whole ? add_buffer(e, name, sem::Memory::Sbuf, n.dtype, {n_tile, N / n_tile * S}, {})
              : add_buffer(e, name, sem::Memory::Sbuf, n.dtype, {n_tile, S}, nest.strip_depth());
    Tile dest{buf, whole ? window(scaled(chunks.at, S), S) : Window{}, {n_tile, S}};
    auto no = is_matmul(n) ? emit_transposed_matmul(e, nest, node, chunks, dest)
                           : emit_transposed_op(e, nest, node, chunks, dest);
    if (no) return no;
    nest.transposed[node] = {buf, whole};
  }
  return std::nullopt;
}

}  // namespace ts::lower

#include "tilesweep/lower/split_reduction.h"

#include <fmt/format.h>

#include <limits>

#include "tilesweep/base/error.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/frame.h"
#include "tilesweep/lower/tile_op.h"

namespace ts::lower {

namespace {

// The reducer at the root of a reduction's element expression, or nullopt (mean divides the
// reduced sum: its root is a division).
std::optional<sem::Reducer> root_reducer(const ir::Node& n) {
  if (n.body.root < 0) return std::nullopt;
  const sem::TermNode& root = n.body.nodes[static_cast<std::size_t>(n.body.root)];
  if (root.op != sem::TermOp::Reduce) return std::nullopt;
  return root.reducer;
}

double identity_of(sem::Reducer r) {
  switch (r) {
    case sem::Reducer::Sum:
      return 0;
    case sem::Reducer::Prod:
      return 1;
    case sem::Reducer::Max:
      return std::numeric_limits<float>::lowest();
    case sem::Reducer::Min:
      return std::numeric_limits<float>::max();
  }
  return 0;
}

// "op(x, axis=1, keepdims=True)" over `arg`.
std::string reduce_text(const std::string& op, const std::string& arg) {
  return fmt::format("{}({}, axis=1, keepdims=True)", op, arg);
}

}  // namespace

std::optional<double> running_identity(const ir::Node& n) {
  std::optional<sem::Reducer> r = root_reducer(n);
  if (!r) return std::nullopt;
  return identity_of(*r);
}

std::optional<std::string> combine_op(const ir::Node& n) {
  std::optional<sem::Reducer> r = root_reducer(n);
  if (!r) return std::nullopt;
  switch (*r) {
    case sem::Reducer::Sum:
      return "add";
    case sem::Reducer::Prod:
      return "mul";
    case sem::Reducer::Max:
      return "maximum";
    case sem::Reducer::Min:
      return "minimum";
  }
  return std::nullopt;
}

std::optional<sem::Reducer> plain_free_reducer(const ir::Kernel& k, int node) {
  if (!free_axis_reduction(k, node)) return std::nullopt;
  const ir::Node& n = k.nodes[static_cast<std::size_t>(node)];
  if (n.body.root < 0) return std::nullopt;
  const sem::TermNode& root = n.body.nodes[static_cast<std::size_t>(n.body.root)];
  if (root.op != sem::TermOp::Reduce || root.args.size() != 2) return std::nullopt;
  const sem::TermNode& body = n.body.nodes[static_cast<std::size_t>(root.args[1])];
  if (body.op != sem::TermOp::Load || body.operand != 0) return std::nullopt;
  for (int a : body.args)  // each element read where it lies (no strided or shifted index)
    if (n.body.nodes[static_cast<std::size_t>(a)].op != sem::TermOp::Index) return std::nullopt;
  return root.reducer;
}

bool free_axis_reduction(const ir::Kernel& k, int node) {
  const ir::Node& n = k.nodes[static_cast<std::size_t>(node)];
  if (classify(n) != OpClass::Compute || is_matmul(n) || n.spec->contract.empty()) return false;
  auto axis = n.attrs.find("axis");
  if (axis == n.attrs.end() || reduces_rows(k, node)) return false;
  const auto* a = std::get_if<std::int64_t>(&axis->second);
  auto rank = static_cast<std::int64_t>(k.nodes[n.inputs[0]].shape.size());
  return a && rank >= 1 && *a == rank - 1;
}

SplitKernels split_kernels(const ir::Kernel& k, int node) {
  const ir::Node& n = k.nodes[static_cast<std::size_t>(node)];
  std::string params = "x: f32[M, A + B]) -> f32[M, 1]:\n    return ";
  std::string text = "def whole(" + params + reduce_text(n.op, "x") + "\n";
  std::string parts = fmt::format("concat(({}, {}), axis=1)", reduce_text(n.op, "x[:, :A]"),
                                  reduce_text(n.op, "x[:, A:]"));
  text += "def split(" + params + reduce_text(n.op, parts) + "\n";
  ir::Module m = ir::parse_module(text, "<split " + n.op + ">", sem::OpTable::builtin());
  return SplitKernels{m.kernel("whole"), m.kernel("split")};
}

std::vector<SplitReduction> split_reductions(const ir::Kernel& k,
                                             const verify::ProveOptions& options,
                                             verify::VerdictCache* cache) {
  std::vector<SplitReduction> out;
  for (std::size_t i = 0; i < k.nodes.size(); ++i) {
    int node = static_cast<int>(i);
    if (!free_axis_reduction(k, node)) continue;
    SplitReduction s;
    s.node = node;
    std::optional<sem::Reducer> reducer = root_reducer(k.nodes[i]);
    std::optional<SplitKernels> kernels;
    try {
      kernels = split_kernels(k, node);
    } catch (const UserError& e) {  // an op outside the built-in table
      s.why = fmt::format("'{}': {}", k.nodes[i].op, e.what());
      out.push_back(std::move(s));
      continue;
    }
    s.identity = reducer ? identity_of(*reducer) : 0;
    s.proof = verify::prove_equivalent(kernels->whole, kernels->split, options, cache);
    s.proved = s.proof.proved() && reducer;
    if (!s.proof.proved())
      s.why = fmt::format("the split of '{}' is not proved ({}{}{})", k.nodes[i].op,
                          verify::verdict_name(s.proof.kind), s.proof.reason.empty() ? "" : ": ",
                          s.proof.reason);
    else if (!reducer)
      s.why = fmt::format("'{}' has no reducer at its root to start from", k.nodes[i].op);
    out.push_back(std::move(s));
  }
  return out;
}

void add_streamed_tilings(std::vector<GroupTiling>& tilings, const ir::Kernel& k,
                          const std::vector<int>& group, const GroupExtent& extent,
                          const std::vector<SplitReduction>& splits) {
  if (extent.has_matmul || extent.reduced_cols <= 512 || tilings.empty()) return;
  for (int n : group)
    if (free_axis_reduction(k, n) && !proved_split(splits, n)) return;
  add_free_tilings(tilings, extent.reduced_cols, 8192);
}

void add_free_tilings(std::vector<GroupTiling>& tilings, std::int64_t cols, std::int64_t widest) {
  GroupTiling base = tilings.front();
  for (std::int64_t w = 512; w <= widest && w < cols; w *= 2) {
    if (cols % w) continue;
    GroupTiling t = base;
    t.block = 1;
    t.free = w;
    t.hoist = t.spill = false;
    tilings.push_back(t);
  }
}

bool streamed(const ir::Kernel& k, const std::vector<int>& group, const GroupTiling& tiling) {
  if (tiling.free <= 0) return false;
  bool reduces = false;
  for (int n : group) {
    if (is_matmul(k.nodes[static_cast<std::size_t>(n)])) return false;
    reduces = reduces || free_axis_reduction(k, n);
  }
  return reduces;
}

const SplitReduction* proved_split(const std::vector<SplitReduction>& splits, int node) {
  for (const auto& s : splits)
    if (s.node == node) return s.proved ? &s : nullptr;
  return nullptr;
}

}  // namespace ts::lower

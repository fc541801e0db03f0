#include "tilesweep/lower/online_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

#include "tilesweep/base/error.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/frame.h"
#include "tilesweep/lower/index_source.h"
#include "tilesweep/lower/split_reduction.h"
#include "tilesweep/lower/tile_op.h"

namespace ts::lower {

namespace {

bool elementwise(const ir::Kernel& k, int node) {
  const ir::Node& n = k.nodes[static_cast<std::size_t>(node)];
  return classify(n) == OpClass::Compute && !is_matmul(n) && !n.attrs.count("axis") && n.spec &&
         n.spec->contract.empty() && !is_constant(k, node);
}

// The consumer's streamed operand: a free-axis reduction's operand, or the left operand of a
// matmul contracting its last axis.
int streamed_operand(const ir::Kernel& k, int node) {
  const ir::Node& n = k.nodes[static_cast<std::size_t>(node)];
  if (free_axis_reduction(k, node)) return n.inputs[0];
  if (is_matmul(n) && n.inputs.size() == 2 && k.nodes[n.inputs[0]].shape.size() >= 2)
    return n.inputs[0];
  return -1;
}

// The element-wise cone of `operand` (its ops, in node order) and its leaves other than
// constants; `stop` is a leaf even where it is element-wise.
void cone(const ir::Kernel& k, int operand, std::set<int>& ops, std::set<int>& leaves,
          int stop = -1) {
  std::vector<int> stack = {operand};
  while (!stack.empty()) {
    int n = stack.back();
    stack.pop_back();
    if (is_constant(k, n)) continue;
    if (!elementwise(k, n) || n == stop) {
      leaves.insert(n);
      continue;
    }
    if (!ops.insert(n).second) continue;
    for (int in : k.nodes[static_cast<std::size_t>(n)].inputs) stack.push_back(in);
  }
}

std::string literal(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";
  return v < 0 ? "(" + s + ")" : s;
}

// The text of `node` with the source written `x` and the statistic `s`: the kernel's own ops as
// calls ("exp(sub(x, s))"); a UserError for an op with attributes or a dim used as a value.
std::string chain_text(const ir::Kernel& k, const OnlineSplit& o, int node, const std::string& x,
                       const std::string& s) {
  if (node == o.source) return x;
  if (node == o.statistic) return s;
  const ir::Node& n = k.nodes[static_cast<std::size_t>(node)];
  if (n.op == "const") {
    const auto* v = std::get_if<double>(&n.attrs.at("value"));
    if (!v) throw UserError(fmt::format("a constant of '{}' without a value", n.op));
    return literal(*v);
  }
  if (!n.attrs.empty() || n.inputs.empty())
    throw UserError(fmt::format("'{}' in the chain has no text form here", n.op));
  std::string out = n.op + "(";
  for (std::size_t i = 0; i < n.inputs.size(); ++i)
    out += (i ? ", " : "") + chain_text(k, o, n.inputs[i], x, s);
  return out + ")";
}

std::string reduce_text(const std::string& op, const std::string& arg) {
  return fmt::format("{}({}, axis=1, keepdims=True)", op, arg);
}

}  // namespace

OnlineSplitKernels online_split_kernels(const ir::Kernel& k, const OnlineSplit& o) {
  const ir::Node& stat = k.nodes[static_cast<std::size_t>(o.statistic)];
  const ir::Node& cons = k.nodes[static_cast<std::size_t>(o.consumer)];
  std::optional<std::string> fold = combine_op(stat);
  if (!fold) throw UserError(fmt::format("'{}' has no running form", stat.op));
  bool matmul = is_matmul(cons);
  std::optional<std::string> combine =
      matmul ? std::optional<std::string>("add") : combine_op(cons);
  if (!combine) throw UserError(fmt::format("'{}' has no element-wise combine", cons.op));
  int operand = o.chain.back();
  auto ch = [&](const std::string& x, const std::string& s) {
    return chain_text(k, o, operand, x, s);
  };
  auto red = [&](const std::string& arg, const std::string& rows) {
    return matmul ? fmt::format("matmul({}, w{})", arg, rows) : reduce_text(cons.op, arg);
  };
  std::string params = matmul ? "x: f32[M, A + B], w: f32[A + B, N]) -> f32[M, N]:\n"
                              : "x: f32[M, A + B]) -> f32[M, 1]:\n";
  std::string text = "def whole(" + params;
  text += "    s = " + reduce_text(stat.op, "x") + "\n";
  text += "    return " + red(ch("x", "s"), "") + "\n";
  text += "def split(" + params;
  text += "    sa = " + reduce_text(stat.op, "x[:, :A]") + "\n";
  text += fmt::format("    s = {}(sa, {})\n", *fold, reduce_text(stat.op, "x[:, A:]"));
  text += fmt::format("    return {}(mul({}, {}), {})\n", *combine,
                      red(ch("x[:, :A]", "sa"), "[:A, :]"), ch("sa", "s"),
                      red(ch("x[:, A:]", "s"), "[A:, :]"));
  ir::Module m = ir::parse_module(text, "<online " + cons.op + ">", sem::OpTable::builtin());
  return OnlineSplitKernels{m.kernel("whole"), m.kernel("split")};
}

std::vector<OnlineSplit> online_splits(const ir::Kernel& k, const verify::ProveOptions& options,
                                       verify::VerdictCache* cache) {
  std::vector<OnlineSplit> out;
  for (std::size_t i = 0; i < k.nodes.size(); ++i) {
    int consumer = static_cast<int>(i);
    int operand = streamed_operand(k, consumer);
    if (operand < 0 || !elementwise(k, operand)) continue;
    std::set<int> ops, leaves;
    cone(k, operand, ops, leaves);
    // One statistic: a free-axis reduction of the chain's other leaf, as wide as the operand.
    OnlineSplit o;
    o.consumer = consumer;
    for (int leaf : leaves)
      if (free_axis_reduction(k, leaf)) o.statistic = o.statistic < 0 ? leaf : -2;
    if (o.statistic < 0) continue;
    o.source = k.nodes[static_cast<std::size_t>(o.statistic)].inputs[0];
    // A streamed value computed element-wise (attention's scores scaled, s = q k^T / sqrt(d)):
    // the chain starts at it.
    if (ops.count(o.source)) {
      ops.clear();
      leaves.clear();
      cone(k, operand, ops, leaves, o.source);
    }
    if (leaves.size() != 2) continue;
    if (!leaves.count(o.source) || k.nodes[static_cast<std::size_t>(o.source)].shape !=
                                       k.nodes[static_cast<std::size_t>(operand)].shape)
      continue;
    o.chain.assign(ops.begin(), ops.end());  // node order is topological
    std::optional<OnlineSplitKernels> kernels;
    try {
      kernels = online_split_kernels(k, o);
      o.form = chain_text(k, o, o.chain.back(), "x", "s");
    } catch (const UserError& e) {
      o.why = e.what();
      out.push_back(std::move(o));
      continue;
    }
    o.proof = verify::prove_equivalent(kernels->whole, kernels->split, options, cache);
    o.proved = o.proof.proved();
    if (!o.proved)
      o.why = fmt::format("the online split of '{}' is not proved ({}{}{})", k.nodes[i].op,
                          verify::verdict_name(o.proof.kind), o.proof.reason.empty() ? "" : ": ",
                          o.proof.reason);
    out.push_back(std::move(o));
  }
  return out;
}

void add_online_tilings(std::vector<GroupTiling>& tilings, const ir::Kernel& k,
                        const std::vector<int>& group, const GroupExtent& extent,
                        const std::vector<OnlineSplit>& online, const sem::DimEnv& dims) {
  if (extent.reduced_cols <= 128 || tilings.empty()) return;
  auto in_group = [&](int n) { return std::find(group.begin(), group.end(), n) != group.end(); };
  // Each online matmul's partial product in one PSUM bank (N <= 512 f32 columns); a matmul that
  // makes the streamed row (the scores) is computed key tile by key tile, in banks of 512.
  for (int n : group)
    if (is_matmul(k.nodes[static_cast<std::size_t>(n)]) && proved_online(online, n) &&
        group_extent(k, {n}, dims).matmul_n.front() > 512)
      return;
  // A matmul or a reduction whose online split is proved, with its statistic and chain in the
  // same nest (a reduction alone: the row-wide ops after it run in a second pass over the key
  // tiles, online_nest.cpp).
  const OnlineSplit* nested = nullptr;
  for (int n : group) {
    const OnlineSplit* s = proved_online(online, n);
    if (s && in_group(s->consumer) && in_group(s->statistic) &&
        std::all_of(s->chain.begin(), s->chain.end(), in_group) &&
        (!nested || is_matmul(k.nodes[static_cast<std::size_t>(n)])))
      nested = s;
  }
  if (!nested) return;
  // Where the streamed value reads a mask (a where over positions, index_source.h), key tiles of
  // 128 and 256 columns too: the tiles the mask fills entirely are skipped (online_nest.cpp,
  // verify/tile_skip.h), and the narrower the tiles, the more of them.
  std::int64_t narrowest = reads_positions(k, nested->source) ? 128 : 512;
  GroupTiling base = tilings.front();
  base.block = 1;
  base.free = 0;
  base.store = 0;
  base.hoist = base.spill = base.resident = base.panel = false;
  for (std::int64_t w = narrowest; w <= 8192 && w < extent.reduced_cols; w *= 2) {
    if (extent.reduced_cols % w) continue;
    base.online = w;
    tilings.push_back(base);
    // The score matmul's right-hand side loaded once per batch iteration, not per strip and
    // pass (dropped where no matmul of the group reads one from HBM).
    if (extent.has_matmul) {
      tilings.push_back(base);
      tilings.back().resident = true;
    }
  }
}

const OnlineSplit* proved_online(const std::vector<OnlineSplit>& splits, int node) {
  for (const auto& s : splits)
    if (s.consumer == node) return s.proved ? &s : nullptr;
  return nullptr;
}

}  // namespace ts::lower

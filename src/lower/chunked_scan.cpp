#include "tilesweep/lower/chunked_scan.h"

#include <fmt/format.h>

#include <algorithm>

#include "tilesweep/base/error.h"
#include "tilesweep/ir/dtype.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/lower/frame.h"
#include "tilesweep/lower/split_reduction.h"
#include "tilesweep/verify/cache.h"

namespace ts::lower {

namespace {

// The operand names x0, x1, .. of an op with `n` operands, as parameters over `shape`, and as
// arguments sliced by `slice` ("" for whole).
std::string params(int n, const std::string& shape) {
  std::string out;
  for (int i = 0; i < n; ++i) out += fmt::format("x{}: f32[{}], ", i, shape);
  return out;
}
std::string args(int n, const std::string& slice) {
  std::string out;
  for (int i = 0; i < n; ++i) out += fmt::format("{}x{}{}", i ? ", " : "", i, slice);
  return out;
}

int operand_count(const std::string& op) {
  const sem::OpSpec* spec = sem::OpTable::builtin().find(op);
  if (!spec) throw UserError(fmt::format("'{}' is not a built-in op", op));
  return static_cast<int>(spec->operands.size());
}

ChunkLemma parse_lemma(const std::string& name, const std::string& text, const std::string& op) {
  ir::Module m =
      ir::parse_module(text, fmt::format("<{} lemma of {}>", name, op), sem::OpTable::builtin());
  return ChunkLemma{name, m.kernel("whole"), m.kernel("split")};
}

}  // namespace

bool free_axis_scan(const ir::Kernel& k, int node) {
  const ir::Node& n = k.nodes[static_cast<std::size_t>(node)];
  if (classify(n) != OpClass::Compute || !n.spec || n.spec->chunk.empty() || n.inputs.empty())
    return false;
  auto axis = n.attrs.find("axis");
  if (axis == n.attrs.end()) return false;
  const auto* a = std::get_if<std::int64_t>(&axis->second);
  auto rank = static_cast<std::int64_t>(k.nodes[n.inputs[0]].shape.size());
  return a && rank >= 2 && *a == rank - 1;
}

std::vector<ChunkLemma> chunk_lemmas(const std::string& op, const std::string& chunk) {
  int n = operand_count(op);
  std::vector<ChunkLemma> out;
  std::string sig = fmt::format("({}) -> f32[M, N]:\n", params(n, "M, N"));
  out.push_back(
      parse_lemma("start",
                  "def whole" + sig + fmt::format("    return {}({}, axis=1)\n", op, args(n, "")) +
                      "def split" + sig +
                      fmt::format("    return {}({}, x0[:, :1] * 0.0)\n", chunk, args(n, "")),
                  op));
  sig = fmt::format("({}s: f32[M, 1]) -> f32[M, A]:\n", params(n, "M, A + B"));
  out.push_back(parse_lemma(
      "prefix",
      "def whole" + sig + fmt::format("    return {}({}, s)[:, :A]\n", chunk, args(n, "")) +
          "def split" + sig + fmt::format("    return {}({}, s)\n", chunk, args(n, "[:, :A]")),
      op));
  sig = fmt::format("({}s: f32[M, 1]) -> f32[M, 1]:\n", params(n, "M, N + 1"));
  out.push_back(parse_lemma(
      "peel",
      "def whole" + sig + fmt::format("    return {}({}, s)[:, N:N + 1]\n", chunk, args(n, "")) +
          "def split" + sig + fmt::format("    p = {}({}, s)\n", chunk, args(n, "[:, :1]")) +
          fmt::format("    return {}({}, p)[:, N - 1:N]\n", chunk, args(n, "[:, 1:]")),
      op));
  return out;
}

std::vector<ChunkedScan> chunked_scans(const ir::Kernel& k, const verify::ProveOptions& options,
                                       verify::VerdictCache* cache) {
  std::vector<ChunkedScan> out;
  for (std::size_t i = 0; i < k.nodes.size(); ++i) {
    int node = static_cast<int>(i);
    if (!free_axis_scan(k, node)) continue;
    const ir::Node& n = k.nodes[i];
    ChunkedScan s;
    s.node = node;
    std::vector<ChunkLemma> lemmas;
    try {
      lemmas = chunk_lemmas(n.op, n.spec->chunk);
    } catch (const UserError& e) {  // an op outside the built-in table
      s.why = fmt::format("'{}': {}", n.op, e.what());
      out.push_back(std::move(s));
      continue;
    }
    s.proved = true;
    for (const auto& l : lemmas) {
      s.proofs.push_back(verify::prove_equivalent(l.whole, l.split, options, cache));
      const verify::Verdict& v = s.proofs.back();
      if (v.proved()) continue;
      s.proved = false;
      s.why = fmt::format("the {} lemma of '{}' chunks is not proved ({}{}{})", l.name, n.op,
                          verify::verdict_name(v.kind), v.reason.empty() ? "" : ": ", v.reason);
      break;
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::optional<TileOp> chunk_tile_op(const ir::Kernel& k, int node) {
  const ir::Node& n = k.nodes[static_cast<std::size_t>(node)];
  if (!free_axis_scan(k, node)) return std::nullopt;
  std::string sig, call;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    sig += fmt::format("x{}: {}[P, F], ", i, ir::dtype_name(k.nodes[n.inputs[i]].dtype));
    call += fmt::format("x{}, ", i);
  }
  std::string dt = ir::dtype_name(n.dtype);
  std::string text = fmt::format("def step({}s: {}[P, 1]) -> {}[P, F]:\n    return {}({}s)\n", sig,
                                 dt, dt, n.spec->chunk, call);
  TileOp t;
  try {
    t.kernel =
        ir::parse_module(text, "<chunk of " + n.op + ">", sem::OpTable::builtin()).kernel("step");
  } catch (const UserError&) {
    return std::nullopt;
  }
  t.kernel.name = n.spec->chunk;
  t.key = verify::canonical_text(t.kernel);
  return t;
}

void add_chunked_tilings(std::vector<GroupTiling>& tilings, const ir::Kernel& k,
                         const std::vector<int>& group, const GroupExtent& extent,
                         const std::vector<ChunkedScan>& scans) {
  if (!extent.chunkable || extent.has_matmul || tilings.empty()) return;
  for (int n : group) {
    if (!free_axis_scan(k, n)) continue;
    auto it =
        std::find_if(scans.begin(), scans.end(), [&](const ChunkedScan& s) { return s.node == n; });
    if (it == scans.end() || !it->usable()) return;
  }
  add_free_tilings(tilings, extent.cols, 4096);
}

}  // namespace ts::lower

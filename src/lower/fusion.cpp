#include "tilesweep/lower/fusion.h"

#include <algorithm>

#include "tilesweep/lower/index_source.h"
#include "tilesweep/lower/tile_op.h"

namespace ts::lower {

namespace {

// The row dim of a value, as a Dim (1 when it has none), and its batch dims.
// A reduction along a batch dim runs in its operand's nest (frame.h): its operand's key.
std::vector<sem::Dim> row_key(const ir::Kernel& k, int node) {
  if (reduces_batch(k, node)) node = k.nodes[node].inputs[0];
  Frame f = frame_of(k, node);
  const auto& s = k.nodes[node].shape;
  std::vector<sem::Dim> key;
  int batch_end = f.row >= 0 ? f.row : (f.col >= 0 ? f.col : f.rank);
  for (int d = 0; d < batch_end; ++d) key.push_back(s[d]);
  key.push_back(f.row >= 0 ? s[f.row] : sem::Dim(1));
  return key;
}

// Whether two row keys are the same rows: equal dims, or dims the kernel's preconditions state
// equal (rope's halves: D // 2 and D - D // 2, with "D - D // 2 == D // 2").
bool same_rows(const ir::Kernel& k, const std::vector<sem::Dim>& a,
               const std::vector<sem::Dim>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t d = 0; d < a.size(); ++d) {
    bool stated = std::any_of(k.preconditions.begin(), k.preconditions.end(), [&](const auto& p) {
      return p.cmp == sem::BinOp::Eq &&
             ((p.lhs == a[d] && p.rhs == b[d]) || (p.lhs == b[d] && p.rhs == a[d]));
    });
    if (!(a[d] == b[d]) && !stated) return false;
  }
  return true;
}

// An op that works tile by tile on its rows: no matmul, no reduction or scan along an axis.
bool elementwise(const ir::Kernel& k, int node) {
  const ir::Node& n = k.nodes[node];
  return !is_matmul(n) && !n.attrs.count("axis") && n.spec && n.spec->contract.empty();
}

// Whether rows `a` are rows `b` but for the last batch dim, which is 1 in `a` (a value broadcast
// along the dim a nest carries a batch reduction over: it is the same in every trip of that loop).
bool broadcast_rows(const ir::Kernel& k, const std::vector<sem::Dim>& a,
                    const std::vector<sem::Dim>& b) {
  if (a.size() != b.size() || a.size() < 2) return false;
  std::size_t carried = a.size() - 2;
  if (!(a[carried] == sem::Dim(1)) || b[carried] == sem::Dim(1)) return false;
  std::vector<sem::Dim> x = a, y = b;
  x.erase(x.begin() + static_cast<std::ptrdiff_t>(carried));
  y.erase(y.begin() + static_cast<std::ptrdiff_t>(carried));
  return same_rows(k, x, y);
}

// Fused groups, each node joining the last group where it may; with `broadcast`, a node whose rows
// are the group's but for a broadcast carried dim (or the other way round) may join too.
Lowered<std::vector<std::vector<int>>> greedy_groups(const ir::Kernel& k, bool fuse,
                                                     bool broadcast) {
  std::vector<std::vector<int>> groups;
  std::vector<int> group_of(k.nodes.size(), -1);
  for (std::size_t c = 0; c < k.nodes.size(); ++c) {
    const ir::Node& n = k.nodes[c];
    if (classify(n) != OpClass::Compute || is_constant(k, static_cast<int>(c)) ||
        is_position(k, static_cast<int>(c)))
      continue;  // folded, or computed inside the ops reading it (a mask)
    int id = static_cast<int>(c);
    if (auto frame = find_frame(k, id); !frame) return frame.no_program();
    if (fuse && !groups.empty()) {
      int g = static_cast<int>(groups.size()) - 1;
      auto mine = row_key(k, id), theirs = row_key(k, groups[g].front());
      bool rows =
          same_rows(k, mine, theirs) ||
          (broadcast && (broadcast_rows(k, mine, theirs) || broadcast_rows(k, theirs, mine)));
      bool ok = rows, linked = false;
      for (std::size_t i = 0; i < n.inputs.size() && ok; ++i) {
        int p = n.inputs[i];
        bool aligned = operand_role(k, id, static_cast<int>(i)) == Role::RowAligned;
        if (group_of[p] == g) {
          // A batch reduction's value is whole only after its nest's loop over the dim.
          ok = aligned && !reduces_batch(k, p);
          linked = true;
        } else if (aligned && group_of[p] < 0) {
          // An independent branch over the same input: it joins when the group reads it too.
          for (int m : groups[g])
            for (std::size_t j = 0; j < k.nodes[m].inputs.size(); ++j)
              if (k.nodes[m].inputs[j] == p &&
                  operand_role(k, m, static_cast<int>(j)) == Role::RowAligned)
                linked = true;
        }
      }
      // Independent element-wise chains over the same rows share one nest: what joins them
      // later stays on chip, one HBM store at the end.
      bool chains = elementwise(k, id) && std::all_of(groups[g].begin(), groups[g].end(),
                                                      [&](int m) { return elementwise(k, m); });
      if (ok && (linked || chains)) {
        groups[g].push_back(id);
        group_of[c] = g;
        continue;
      }
    }
    group_of[c] = static_cast<int>(groups.size());
    groups.push_back({id});
  }
  return groups;
}

// True when every node of each group that is broadcast along the group's carried dim (its rows
// the group's but for a 1 there) is element-wise, in a group that carries a batch reduction: the
// nest computes such a value once per strip, before the loop over that dim (group_nest.cpp).
bool broadcasts_hoist(const ir::Kernel& k, const std::vector<std::vector<int>>& groups) {
  for (const auto& g : groups) {
    std::vector<sem::Dim> widest = row_key(k, g.front());
    for (int n : g)
      if (broadcast_rows(k, widest, row_key(k, n))) widest = row_key(k, n);
    bool carries = std::any_of(g.begin(), g.end(), [&](int n) { return reduces_batch(k, n); });
    for (int n : g)
      if (broadcast_rows(k, row_key(k, n), widest) && (!carries || !elementwise(k, n)))
        return false;
  }
  return true;
}

}  // namespace

Lowered<std::vector<std::vector<int>>> fusion_groups(const ir::Kernel& k, bool fuse) {
  if (fuse) {
    auto wide = greedy_groups(k, true, true);
    if (!wide || broadcasts_hoist(k, *wide)) return wide;
  }
  return greedy_groups(k, fuse, false);
}

}  // namespace ts::lower

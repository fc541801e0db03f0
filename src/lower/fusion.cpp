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

}  // namespace

Lowered<std::vector<std::vector<int>>> fusion_groups(const ir::Kernel& k, bool fuse) {
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
      bool rows = same_rows(k, row_key(k, id), row_key(k, groups[g].front()));
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

}  // namespace ts::lower

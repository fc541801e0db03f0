#include "tilesweep/lower/index_source.h"

#include <fmt/format.h>

#include <unordered_set>
#include <vector>

namespace ts::lower {

bool is_index_source(const ir::Node& n) {
  if (n.param >= 0 || !n.inputs.empty()) return false;
  for (const auto& t : n.body.nodes)
    if (t.op == sem::TermOp::Index) return true;
  return false;
}

bool is_position(const ir::Kernel& k, int node) {
  // Iterative (input size never drives recursion), stopping at the first parameter reached.
  std::vector<int> todo = {node};
  std::unordered_set<int> seen;
  bool index = false;
  while (!todo.empty()) {
    int at = todo.back();
    todo.pop_back();
    if (!seen.insert(at).second) continue;
    const ir::Node& n = k.nodes[static_cast<std::size_t>(at)];
    if (n.param >= 0) return false;
    if (is_index_source(n)) index = true;
    for (int in : n.inputs) {
      if (k.nodes[static_cast<std::size_t>(in)].param >= 0) return false;
      todo.push_back(in);
    }
  }
  return index;
}

bool reads_positions(const ir::Kernel& k, int node) {
  if (is_position(k, node)) return false;
  for (int in : k.nodes[static_cast<std::size_t>(node)].inputs)
    if (is_position(k, in)) return true;
  return false;
}

std::string index_source_reason(const ir::Node& n) {
  return fmt::format(
      "'{}' is an index tensor (a mask's positions): it is computed inside the op that reads it, "
      "and it is no kernel output",
      n.op);
}

}  // namespace ts::lower

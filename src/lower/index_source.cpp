#include "tilesweep/lower/index_source.h"

#include <fmt/format.h>

namespace ts::lower {

bool is_index_source(const ir::Node& n) {
  if (n.param >= 0 || !n.inputs.empty()) return false;
  for (const auto& t : n.body.nodes)
    if (t.op == sem::TermOp::Index) return true;
  return false;
}

std::string index_source_reason(const ir::Node& n) {
  return fmt::format(
      "'{}' is an index tensor (a mask's positions): masks are not lowered yet (the ISA's iota and "
      "affine_select need each tile's position, which tile ops do not carry)",
      n.op);
}

}  // namespace ts::lower

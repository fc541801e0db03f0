// Spilling (contract): a matmul result that later ops of its nest read, in a tiling that spills,
// goes to HBM instead of staying on chip for the whole strip — to its output tensor when it has
// one, else to a scratch tensor of its whole shape made here (Buffer::spill) — and the later ops
// load it back through hbm_view like any HBM value.
#include "emission.h"

namespace ts::lower {

void spill(Emission& e, int node) {
  if (e.prefix.views[static_cast<std::size_t>(node)]) return;  // its output tensor holds it
  const ir::Node& n = e.kernel.nodes[node];
  Buffer b;
  b.name = "spill_" + (n.label.empty() ? n.op + std::to_string(node) : n.label);
  b.memory = sem::Memory::Hbm;
  b.dtype = n.dtype;
  b.shape = e.shape(node);
  b.spill = true;
  int buffer = e.builder.add_buffer(std::move(b));
  e.spilled[node] = identity_view(e.builder.program(), buffer);
}

const HbmView* hbm_view(const Emission& e, int node) {
  if (auto it = e.spilled.find(node); it != e.spilled.end()) return &it->second;
  const auto& view = e.prefix.views[static_cast<std::size_t>(node)];
  return view ? &*view : nullptr;
}

}  // namespace ts::lower

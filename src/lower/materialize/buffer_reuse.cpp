// Buffer reuse in a loop nest (contract): a value of the group whose last reader (in the group's
// program order) has been emitted gives its on-chip buffer to a later value of the same memory,
// dtype, shape and multi-buffering depth, instead of every value holding its own buffer for the
// whole nest. The capacity check sums the buffers a program declares, so with reuse it counts
// the peak of the values live at once, not their sum. A value is never written here into the
// buffer of a value its own op reads: the reader's instructions all precede the new writer's in
// every loop iteration (writes over an operand are in_place.cpp's, a choice of the search). Nests
// whose values are not emitted in the group's order (a swap site's values wait for their consumer;
// a streamed nest folds along free tiles) reuse nothing.
#include <algorithm>

#include "emission.h"

namespace ts::lower {

std::size_t emitted_at(const Emission& e, const std::vector<int>& nodes, int node) {
  int at = node;
  if (auto it = e.plan.absorbed.find(node); it != e.plan.absorbed.end()) at = it->second;
  return static_cast<std::size_t>(std::find(nodes.begin(), nodes.end(), at) - nodes.begin());
}

void plan_reuse(const Emission& e, Nest& nest) {
  nest.last_read.clear();
  nest.free_buffers.clear();
  const auto& nodes = e.plan.groups[nest.group];
  if (!e.plan.reuse_buffers || nest.streamed ||
      std::any_of(nodes.begin(), nodes.end(), [&](int n) { return e.is_transposed(n); }))
    return;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    std::size_t& last = nest.last_read[nodes[i]];
    last = std::max(last, emitted_at(e, nodes, nodes[i]));
    for (int in : e.kernel.nodes[nodes[i]].inputs)
      if (std::count(nodes.begin(), nodes.end(), in))
        nest.last_read[in] = std::max(nest.last_read[in], emitted_at(e, nodes, nodes[i]));
  }
}

int value_buffer(Emission& e, Nest& nest, const std::string& name, sem::Memory m, ir::DType dt,
                 const Shape& shape, Depth depth) {
  auto same = [&](int b) {
    const Buffer& x = e.builder.buffer(b);
    return x.memory == m && x.dtype == dt && x.bufs == depth.bufs && x.bufs_cap == depth.cap &&
           std::equal(x.shape.begin(), x.shape.end(), shape.begin(), shape.end());
  };
  auto it = std::find_if(nest.free_buffers.begin(), nest.free_buffers.end(), same);
  if (it == nest.free_buffers.end()) return add_buffer(e, name, m, dt, shape, depth);
  int b = *it;
  nest.free_buffers.erase(it);
  return b;
}

void release_read(Nest& nest, std::size_t position) {
  for (auto v = nest.values.begin(); v != nest.values.end();) {
    auto last = nest.last_read.find(v->first);
    if (last == nest.last_read.end() || last->second != position) {
      ++v;
      continue;
    }
    if (!std::count(nest.free_buffers.begin(), nest.free_buffers.end(), v->second.buffer))
      nest.free_buffers.push_back(v->second.buffer);
    v = nest.values.erase(v);  // nothing reads it any more
  }
}

}  // namespace ts::lower

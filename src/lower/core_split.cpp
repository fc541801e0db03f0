#include "tilesweep/lower/core_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <vector>

namespace ts::lower {

namespace {

// The instructions of block b and the blocks inside it, in program order.
void instructions_of(const Program& p, int b, std::vector<int>& out) {
  std::vector<std::pair<int, std::size_t>> stack = {{b, 0}};  // no recursion: nests may be deep
  while (!stack.empty()) {
    auto& [block, next] = stack.back();
    const auto& items = p.blocks[static_cast<std::size_t>(block)].items;
    if (next == items.size()) {
      stack.pop_back();
      continue;
    }
    const Item& item = items[next++];
    if (item.inst >= 0)
      out.push_back(item.inst);
    else
      stack.emplace_back(item.block, 0);
  }
}

int root(const Program& p, int b) {
  while (p.buffers[static_cast<std::size_t>(b)].alias >= 0)
    b = p.buffers[static_cast<std::size_t>(b)].alias;
  return b;
}

// The on-chip buffers an instruction reads. An accumulating one reads its output too, but only
// across the iterations of its accumulate_block (iteration 0 overwrites): checked on its own.
std::vector<int> reads_of(const Inst& in) { return {in.in.begin(), in.in.end()}; }

// Why top-level loop `b` cannot be split, given the on-chip buffers each top-level loop writes
// and those a cross-core reduction combines (`reduced`: carried across the iterations).
std::optional<std::string> loop_conflict(const Program& p, int b,
                                         const std::vector<std::set<int>>& written_by,
                                         const std::set<int>& reduced) {
  std::vector<int> insts;
  instructions_of(p, b, insts);
  const std::set<int>& mine = written_by[static_cast<std::size_t>(b)];
  std::set<int> written, stored;
  for (int i : insts) {
    const Inst& in = p.insts[static_cast<std::size_t>(i)];
    if (in.accumulate_block == b && !reduced.count(in.out))
      return fmt::format("its loop '{}' accumulates across iterations", p.blocks[b].var);
    if (in.dma && in.store) stored.insert(root(p, in.hbm.buffer));
    if (in.dma && !in.store && stored.count(root(p, in.hbm.buffer)))
      return fmt::format("its loop '{}' reads back HBM it writes ({})", p.blocks[b].var,
                         p.buffers[in.hbm.buffer].name);
    for (int r : in.dma && !in.store ? std::vector<int>{} : reads_of(in)) {
      if (written.count(r) || reduced.count(r)) continue;
      if (mine.count(r))
        return fmt::format("its loop '{}' carries {} from one iteration to the next",
                           p.blocks[b].var, p.buffers[r].name);
      for (std::size_t o = 0; o < written_by.size(); ++o)
        if (static_cast<int>(o) != b && written_by[o].count(r))
          return fmt::format("its loop '{}' reads {}, which another loop nest computes",
                             p.blocks[b].var, p.buffers[r].name);
    }
    if (in.out >= 0) written.insert(in.out);
  }
  return std::nullopt;
}

}  // namespace

int core_choice_count(int max_cores) {
  int n = 1;
  for (int c = 1; c < max_cores; c *= 2) ++n;
  return n;
}

int core_choice(int max_cores, int d) {
  return d + 1 < core_choice_count(max_cores) ? 1 << d : std::max(1, max_cores);
}

std::optional<std::string> core_split_conflict(const Program& p) {
  return core_split_conflict(p, {});
}

std::optional<std::string> core_split_conflict(const Program& p, const std::set<int>& reduced) {
  const auto& top = p.blocks.at(0).items;
  std::vector<std::set<int>> written_by(p.blocks.size());  // per top-level loop
  for (const Item& item : top) {
    if (item.block < 0) continue;
    std::vector<int> insts;
    instructions_of(p, item.block, insts);
    for (int i : insts)
      if (int out = p.insts[static_cast<std::size_t>(i)].out; out >= 0)
        written_by[static_cast<std::size_t>(item.block)].insert(out);
  }
  for (const Item& item : top) {
    if (item.block >= 0) {
      if (auto why = loop_conflict(p, item.block, written_by, reduced)) return why;
      continue;
    }
    for (int r : reads_of(p.insts[static_cast<std::size_t>(item.inst)]))
      for (const auto& w : written_by)
        if (!reduced.count(r))
          if (w.count(r))
            return fmt::format("a top-level instruction reads {}, which a split loop computes",
                               p.buffers[r].name);
  }
  return std::nullopt;
}

}  // namespace ts::lower

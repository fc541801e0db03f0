// Spilling: an imported kernel whose on-chip arrays do not fit SBUF (after array contraction and
// the single-buffer fallback) runs as the Neuron compiler runs it, with its largest arrays moved
// out of SBUF, largest first, until the rest fits. Two ways, as the NKIBench baselines' trn1
// profiles show them:
//  - rematerialization: an array that only holds data loaded from a kernel input (one load site)
//    is not kept: every instruction that reads a tile of it is preceded by a DMA that loads that
//    tile again from the input (more HBM reads, no spill traffic: the NKIBench matmul baseline
//    reads its 160 KiB-per-partition weight chunk once per row tile, 9.06 GB, spill 0);
//  - spill to HBM: any other array lives in an HBM scratch tensor of its shape (Buffer::spill);
//    an instruction writing a tile of it writes a staging tile that a DMA saves, one reading a
//    tile reads a staging tile a DMA reloads first (the profiles' spill save / reload bytes).
// Staging tiles are one tile wide and multi-buffered (kStagingBuffers); reads of the same tile in
// one loop body (where the array is not written) share one reload, and a read of a tile written
// earlier in the same loop body reads the save's staging tile (no reload). An array that some
// instruction uses whole cannot be staged by tiles and is not spilled (the capacity check then
// refuses the kernel).
#include "spill.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "translator.h"

namespace ts::nki {

namespace {

using lower::Access;
using lower::Buffer;
using lower::Inst;
using lower::Program;
using lower::Terms;
using lower::Window;

struct Use {
  int inst = -1;
  int operand = -1;  // index into Inst::in; -1: the instruction writes the buffer
};

std::vector<Use> uses_of(const Program& p, int buf) {
  std::vector<Use> uses;
  for (std::size_t i = 0; i < p.insts.size(); ++i) {
    const Inst& in = p.insts[i];
    for (std::size_t j = 0; j < in.in.size(); ++j)
      if (in.in[j] == buf) uses.push_back({static_cast<int>(i), static_cast<int>(j)});
    if (in.out == buf) uses.push_back({static_cast<int>(i), -1});
  }
  return uses;
}

const Window& window_of(const Inst& in, const Use& u) {
  static const Window kWhole{};
  if (u.operand < 0) return in.out_window;
  return static_cast<std::size_t>(u.operand) < in.in_window.size() ? in.in_window[u.operand]
                                                                   : kWhole;
}

// A window's start split at multiples of `width`: the tile index (block terms, coefficients in
// tiles, and a constant) and the start inside the tile; false when a term straddles tiles or the
// window can leave its tile.
struct Split {
  Terms tile_terms, in_terms;
  std::int64_t tile_offset = 0, in_offset = 0;
};
bool split(const Program& p, const Window& w, std::int64_t width, Split& s) {
  s = Split{};
  s.tile_offset = w.offset / width;
  s.in_offset = w.offset % width;
  std::int64_t reach = s.in_offset + w.width;
  for (const auto& [b, step] : w.terms) {
    if (step % width == 0) {
      s.tile_terms.push_back({b, step / width});
    } else {
      s.in_terms.push_back({b, step});
      reach += step * (p.blocks[static_cast<std::size_t>(b)].trips - 1);
    }
  }
  return reach <= width;
}

// The load's HBM access for the tile `read` names: the load's loop terms renamed to the read's
// loops with the same tile coefficient, the free dim narrowed to the read's columns. False when
// the read cannot be mapped onto the load (then the array is spilled to HBM instead).
bool reload_access(const Program& p, const Inst& load, std::int64_t width, const Window& read,
                   Access& out) {
  Split l, r;
  if (!split(p, load.out_window, width, l) || !l.in_terms.empty() || l.in_offset != 0 ||
      load.out_window.width != width)
    return false;
  if (!split(p, read, width, r) || r.tile_offset != l.tile_offset ||
      r.tile_terms.size() != l.tile_terms.size())
    return false;
  std::map<int, int> rename;  // load loop -> read loop
  for (const auto& [lb, coef] : l.tile_terms) {
    auto it = std::find_if(r.tile_terms.begin(), r.tile_terms.end(),
                           [&](const auto& t) { return t.second == coef; });
    if (it == r.tile_terms.end() || p.blocks[it->first].trips > p.blocks[lb].trips) return false;
    rename[lb] = it->first;
  }
  out = load.hbm;
  int free_dim = -1;
  for (std::size_t d = 0; d < out.terms.size(); ++d) {
    for (auto& t : out.terms[d]) {
      auto it = rename.find(t.first);
      if (it != rename.end()) t.first = it->second;
    }
    if (out.tile_dim[d] == 1) {
      if (free_dim >= 0) return false;  // merged dims feed the free dim: not narrowed here
      free_dim = static_cast<int>(d);
    }
  }
  if (free_dim < 0 || out.extent[free_dim] != width) return false;
  if (out.offset.empty()) out.offset.assign(out.extent.size(), 0);
  std::int64_t stride = out.step(static_cast<std::size_t>(free_dim));
  out.offset[free_dim] += r.in_offset * stride;
  for (const auto& [b, step] : r.in_terms) out.terms[free_dim].push_back({b, step * stride});
  out.extent[free_dim] = read.whole() ? width : read.width;
  return true;
}

// The scratch tensor's side of a staged tile: the window's columns of the [P, F] scratch.
Access scratch_access(int scratch, std::int64_t parts, const Window& w) {
  Access a;
  a.buffer = scratch;
  a.extent = {parts, w.width};
  a.terms = {Terms{}, w.terms};
  a.tile_dim = {0, 1};
  a.offset = {0, w.offset};
  return a;
}

class Spiller {
 public:
  Spiller(Program& p, const target::Target& t) : p_(p), t_(t) {}

  bool over() const {
    return lower::on_chip_use(p_, t_.psum.bank_bytes).sbuf_bytes >
           t_.sbuf.usable_bytes_per_partition;
  }

  // The largest SBUF array every use of which names a tile narrower than the array; -1: none.
  int candidate() const {
    int best = -1;
    std::int64_t best_bytes = 0;
    for (std::size_t b = 0; b < p_.buffers.size(); ++b) {
      const Buffer& buf = p_.buffers[b];
      if (buf.memory != sem::Memory::Sbuf || buf.constant || buf.shape.size() != 2) continue;
      std::vector<Use> uses = uses_of(p_, static_cast<int>(b));
      bool tiled = !uses.empty() && std::all_of(uses.begin(), uses.end(), [&](const Use& u) {
        const Window& w = window_of(p_.insts[u.inst], u);
        return !w.whole() && w.width < buf.shape[1];
      });
      std::int64_t bytes = buf.bytes_per_partition() * std::max(1, buf.bufs);
      if (tiled && bytes > best_bytes) best = static_cast<int>(b), best_bytes = bytes;
    }
    return best;
  }

  void spill(int buf) {
    std::vector<Use> uses = uses_of(p_, buf);
    std::vector<Use> writes;
    for (const Use& u : uses)
      if (u.operand < 0) writes.push_back(u), written_.insert({buf, block_of(u.inst)});
    if (!(writes.size() == 1 && rematerialize(buf, uses, writes[0].inst))) to_scratch(buf, uses);
    Buffer& b = p_.buffers[static_cast<std::size_t>(buf)];
    b.memory = sem::Memory::Hbm;  // no longer on chip: its storage (if any) is the scratch tensor
    b.bufs = 1;
    b.nest = -1;
  }

  // Applies the inserted DMAs and drops the dead loads: the instructions renumbered in place.
  void finish();

 private:
  bool rematerialize(int buf, const std::vector<Use>& uses, int load) {
    const Inst& ld = p_.insts[static_cast<std::size_t>(load)];
    if (!ld.dma || ld.store || p_.buffers[ld.hbm.buffer].param < 0) return false;
    std::int64_t width = ld.out_window.width;
    std::vector<Access> reloads;
    for (const Use& u : uses) {
      if (u.operand < 0) continue;
      Access a;
      if (!reload_access(p_, ld, width, window_of(p_.insts[u.inst], u), a)) return false;
      reloads.push_back(a);
    }
    std::size_t k = 0;
    for (const Use& u : uses)
      if (u.operand >= 0) stage_read(buf, u, reloads[k++]);
    dead_.push_back(load);
    return true;
  }

  void to_scratch(int buf, const std::vector<Use>& uses) {
    p_.buffers[static_cast<std::size_t>(buf)].spill = true;
    std::int64_t parts = p_.buffers[static_cast<std::size_t>(buf)].shape[0];
    for (const Use& u : uses) {
      Access a = scratch_access(buf, parts, window_of(p_.insts[u.inst], u));
      if (u.operand >= 0)
        stage_read(buf, u, a);
      else
        stage_write(buf, u, a);
    }
  }

  int staging(int buf, std::int64_t width, const char* what) {
    Buffer s = p_.buffers[static_cast<std::size_t>(buf)];
    s.name += what;
    s.shape = {s.shape[0], width};
    s.bufs = kStagingBuffers;
    s.bufs_cap = 0;
    s.spill = false;
    p_.buffers.push_back(std::move(s));
    return static_cast<int>(p_.buffers.size()) - 1;
  }

  Inst dma(const Access& a, bool store, int tile, const Inst& near) {
    Inst d;
    d.spec = t_.isa.find("dma_copy");
    d.engine = sem::Engine::Dma;
    d.dma = true;
    d.store = store;
    if (store)
      d.in = {tile}, d.in_window = {Window{}};
    else
      d.out = tile;
    d.hbm = a;
    d.note = near.note + (store ? " spill save" : " reload");
    return d;
  }

  using TileKey =
      std::tuple<int, int, std::int64_t, std::int64_t, std::vector<std::pair<int, std::int64_t>>>;
  TileKey key_of(int buf, int inst, const Window& w) {
    return std::make_tuple(
        buf, block_of(inst), w.offset, w.width,
        std::vector<std::pair<int, std::int64_t>>(w.terms.begin(), w.terms.end()));
  }

  void stage_read(int buf, const Use& u, const Access& a) {
    Inst& in = p_.insts[static_cast<std::size_t>(u.inst)];
    const Window& w = in.in_window[u.operand];
    int block = block_of(u.inst);
    TileKey key = key_of(buf, u.inst, w);
    auto shared = reloads_.find(key);
    auto saved = saved_.find(key);
    int tile = -1;
    if (saved != saved_.end()) {
      // The tile was written earlier in the same loop body: its staging tile still holds it (the
      // compiler reads the value it just computed, it does not reload what it saved).
      tile = saved->second;
    } else if (shared != reloads_.end() && !written_in(buf, block)) {
      tile = shared->second;
    } else {
      tile = staging(buf, w.width, "_reload");
      before_[u.inst].push_back(dma(a, false, tile, in));
      reloads_[key] = tile;
    }
    in.in[u.operand] = tile;
    in.in_window[u.operand] = Window{};
  }

  int block_of(int inst) {
    if (block_of_.empty()) {
      block_of_.assign(p_.insts.size(), -1);
      for (std::size_t b = 0; b < p_.blocks.size(); ++b)
        for (const lower::Item& it : p_.blocks[b].items)
          if (it.inst >= 0) block_of_[static_cast<std::size_t>(it.inst)] = static_cast<int>(b);
    }
    return block_of_[static_cast<std::size_t>(inst)];
  }

  bool written_in(int buf, int block) { return written_.count({buf, block}) > 0; }

  void stage_write(int buf, const Use& u, const Access& a) {
    Inst& in = p_.insts[static_cast<std::size_t>(u.inst)];
    int tile = staging(buf, in.out_window.width, "_save");
    saved_[key_of(buf, u.inst, in.out_window)] = tile;
    after_[u.inst].push_back(dma(a, true, tile, in));
    p_.insts[static_cast<std::size_t>(u.inst)].out = tile;
    p_.insts[static_cast<std::size_t>(u.inst)].out_window = Window{};
  }

  Program& p_;
  const target::Target& t_;
  std::map<int, std::vector<Inst>> before_, after_;
  std::map<TileKey, int> reloads_;
  std::map<TileKey, int> saved_;  // the staging tile of the latest write of a tile in its body
  std::vector<int> block_of_;
  std::set<std::pair<int, int>> written_;  // (array, block) pairs where the array is written
  std::vector<int> dead_;
};

void Spiller::finish() {
  if (before_.empty() && after_.empty() && dead_.empty()) return;
  std::vector<Inst> insts;
  insts.reserve(p_.insts.size() + before_.size() + after_.size());
  std::vector<bool> dead(p_.insts.size(), false);
  for (int d : dead_) dead[static_cast<std::size_t>(d)] = true;
  for (lower::Block& blk : p_.blocks) {
    std::vector<lower::Item> items;
    for (const lower::Item& it : blk.items) {
      if (it.inst < 0) {
        items.push_back(it);
        continue;
      }
      auto add = [&](Inst in) {
        items.push_back({static_cast<int>(insts.size()), -1});
        insts.push_back(std::move(in));
      };
      if (auto b = before_.find(it.inst); b != before_.end())
        for (Inst& in : b->second) add(std::move(in));
      if (!dead[static_cast<std::size_t>(it.inst)])
        add(std::move(p_.insts[static_cast<std::size_t>(it.inst)]));
      if (auto a = after_.find(it.inst); a != after_.end())
        for (Inst& in : a->second) add(std::move(in));
    }
    blk.items = std::move(items);
  }
  p_.insts = std::move(insts);
}

}  // namespace

void spill_over_capacity(Program& p, const target::Target& t) {
  Spiller s(p, t);
  while (s.over()) {
    int buf = s.candidate();
    if (buf < 0) break;
    s.spill(buf);
  }
  s.finish();
}

}  // namespace ts::nki

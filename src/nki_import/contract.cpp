// Array contraction: an on-chip array with block dims (dims before nl.par_dim) whose every access
// names the same block (the same affine expression of the loop variables) needs one block of
// storage, not all of them: each iteration writes its block and reads it back before the next
// iteration's block. The compiler allocates such arrays (the full-size arrays of compiler
// output, e.g. (86, 2, par_dim(128), 1024) tiles) as rotating tiles; so does the importer.
#include "translator.h"

namespace ts::nki {

namespace {

// A window's start split into the block it names (terms and offset in multiples of the block
// size) and the position inside the block; false when a term straddles blocks.
bool split(const lower::Window& w, std::int64_t block, lower::Window& in_block,
           std::pair<lower::Terms, std::int64_t>& which) {
  in_block = lower::Window{};
  in_block.width = w.width;
  which = {{}, w.offset / block};
  in_block.offset = w.offset % block;
  for (const auto& [b, s] : w.terms) {
    if (s % block == 0)
      which.first.push_back({b, s / block});
    else if (s < block)
      in_block.terms.push_back({b, s});
    else
      return false;
  }
  return true;
}

}  // namespace

void Translator::contract_arrays() {
  lower::Program& p = builder_.program();
  for (const Array& a : arrays_) {
    if (a.memory == sem::Memory::Hbm || a.par <= 0) continue;
    std::int64_t block = 1;
    for (std::size_t d = static_cast<std::size_t>(a.par) + 1; d < a.shape.size(); ++d)
      block *= a.shape[d];
    lower::Buffer& buf = p.buffers[static_cast<std::size_t>(a.buffer)];
    if (block == buf.shape[1]) continue;
    std::vector<lower::Window*> uses;
    for (lower::Inst& in : p.insts) {
      for (std::size_t j = 0; j < in.in.size(); ++j)
        if (in.in[j] == a.buffer)
          uses.push_back(j < in.in_window.size() ? &in.in_window[j] : nullptr);
      if (in.out == a.buffer) uses.push_back(&in.out_window);
    }
    std::optional<std::pair<lower::Terms, std::int64_t>> first;
    std::vector<lower::Window> inside;
    bool same = !uses.empty();
    for (lower::Window* w : uses) {
      std::pair<lower::Terms, std::int64_t> which;
      lower::Window in_block;
      if (!w || w->whole() || !split(*w, block, in_block, which) ||
          in_block.offset + in_block.width > block) {
        same = false;
        break;
      }
      if (!first) first = which;
      same = same && first->first == which.first && first->second == which.second;
      inside.push_back(in_block);
    }
    if (!same) continue;
    for (std::size_t i = 0; i < uses.size(); ++i)
      *uses[i] = inside[i].width == block ? lower::Window{} : inside[i];
    buf.shape[1] = block;
    if (buf.bufs < 2 && !first->first.empty())
      buf.bufs = kRotatingBuffers;  // a rotating tile of the loops naming the block
  }
}

}  // namespace ts::nki

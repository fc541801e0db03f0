#include "tilesweep/lower/program_printer.h"

#include <fmt/format.h>

namespace ts::lower {

namespace {

std::string terms_text(const Terms& terms, std::int64_t offset, const Program& p) {
  std::string s;
  for (const auto& [b, step] : terms) {
    if (!s.empty()) s += " + ";
    s += step == 1 ? p.blocks[b].var : fmt::format("{}*{}", p.blocks[b].var, step);
  }
  if (offset || s.empty()) s += (s.empty() ? "" : " + ") + std::to_string(offset);
  return s;
}

std::string hbm_text(const Access& a, const Program& p) {
  std::string s = p.buffers[a.buffer].name + "[";
  for (std::size_t d = 0; d < a.extent.size(); ++d) {
    if (d) s += ", ";
    std::string start = terms_text(a.terms[d], a.offset.empty() ? 0 : a.offset[d], p);
    if (a.repeats(d) > 1) {  // position j reads base + stride * ((start + j) // repeat)
      s += fmt::format("{} + ({} +: {}) // {}{}", a.base[d], start, a.extent[d], a.repeats(d),
                       a.step(d) != 1 ? fmt::format(" * {}", a.step(d)) : "");
      continue;
    }
    s += a.extent[d] == 1 ? start
                          : fmt::format("{} +: {}{}", start, a.extent[d],
                                        a.step(d) != 1 ? fmt::format(" step {}", a.step(d)) : "");
  }
  s += "]";
  bool transposed = false;
  int last = -1;
  for (int t : a.tile_dim) {
    if (t < 0) continue;
    transposed = transposed || t < last;
    last = t;
  }
  return transposed ? s + ".T" : s;
}

std::string tile_text(int buffer, const Window& w, const Program& p) {
  const std::string& name = p.buffers[buffer].name;
  if (w.whole()) return name;
  std::string rep = w.repeat > 1 ? fmt::format(" repeat {}", w.repeat) : "";
  if (w.step == 1)
    return fmt::format("{}[:, {} +: {}{}]", name, terms_text(w.terms, w.offset, p), w.width, rep);
  return fmt::format("{}[:, {} +: {} step {}{}]", name, terms_text(w.terms, w.offset, p), w.width,
                     w.step, rep);
}

// (an attribute that moves with the loops, a mask's offset, as its affine expression)
std::string attrs_text(const sem::AttrMap& attrs, const Inst& in, const Program& p) {
  std::string s;
  for (const auto& [k, v] : attrs) {
    const auto* i = std::get_if<std::int64_t>(&v);
    s += fmt::format(" {}={}", k,
                     i && k == in.moving_attr ? terms_text(in.moving, *i, p) : sem::to_string(v));
  }
  return s;
}

void print_block(const Program& p, int b, int indent, std::string& out) {
  std::string pad(static_cast<std::size_t>(indent) * 2, ' ');
  for (const auto& item : p.blocks[b].items) {
    if (item.block >= 0) {
      const Block& c = p.blocks[item.block];
      std::string guard =
          c.guard ? fmt::format(" if {} >= 0", terms_text(c.guard->terms, c.guard->offset, p)) : "";
      out += fmt::format("{}for {} in range({}){}:\n", pad, c.var, c.trips, guard);
      print_block(p, item.block, indent + 1, out);
      continue;
    }
    const Inst& in = p.insts[item.inst];
    std::string dst, src;
    if (in.dma && in.store) {
      dst = hbm_text(in.hbm, p);
      src = tile_text(in.in[0], in.in_window.empty() ? Window{} : in.in_window[0], p) +
            (in.lag(0) > 0 ? fmt::format("@-{}", in.lag(0)) : "");
    } else {
      dst = tile_text(in.out, in.out_window, p);
      if (in.dma) src = hbm_text(in.hbm, p);
      for (std::size_t j = 0; j < in.in.size(); ++j)
        src += (j ? ", " : "") +
               tile_text(in.in[j], j < in.in_window.size() ? in.in_window[j] : Window{}, p) +
               (in.lag(j) > 0 ? fmt::format("@-{}", in.lag(j)) : "");
    }
    std::string acc = in.accumulate_block >= 0
                          ? fmt::format(" (+= over {})", p.blocks[in.accumulate_block].var)
                          : "";
    std::string rep = in.repeat > 1 ? fmt::format(" x{}", in.repeat) : "";
    if (in.rides >= 0)  // reduction_fusion.h
      rep += fmt::format(" (fused: {} with {})", in.fused->op.name,
                         tile_text(p.insts[in.rides].out, p.insts[in.rides].out_window, p));
    out += fmt::format("{}{}{} <- {}[{}]({}){}{}{}\n", pad, dst, acc, in.spec->op.name,
                       sem::engine_name(in.engine), src, attrs_text(in.attrs, in, p), rep,
                       in.note.empty() ? "" : "   # " + in.note);
  }
}

}  // namespace

std::string print_program(const Program& p) {
  std::int64_t sbuf = 0, psum = 0;
  for (const auto& b : p.buffers) {
    if (b.memory == sem::Memory::Sbuf) sbuf += b.bytes_per_partition() * b.bufs;
    if (b.memory == sem::Memory::Psum) psum += b.bytes_per_partition() * b.bufs;
  }
  std::string out = fmt::format(
      "program {}: {} instructions, {} buffers, SBUF {:.1f} KiB/partition, PSUM {:.1f} "
      "KiB/partition, {} core(s)\n",
      p.kernel, p.insts.size(), p.buffers.size(), sbuf / 1024.0, psum / 1024.0, p.cores);
  if (!p.config.empty()) out += "  config: " + p.config + "\n";
  for (const auto& b : p.buffers) {
    std::string shape;
    for (auto d : b.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    std::string role = b.param >= 0    ? fmt::format(" (input {})", b.param)
                       : b.output >= 0 ? fmt::format(" (output {})", b.output)
                                       : "";
    if (b.alias >= 0) role += " (view of " + p.buffers[b.alias].name + ")";
    out += fmt::format("  {}: {} {}[{}]{}{}\n", b.name, sem::memory_name(b.memory),
                       ir::dtype_name(b.dtype), shape,
                       b.bufs > 1 ? fmt::format(" x{} buffers", b.bufs) : "", role);
  }
  print_block(p, 0, 1, out);
  return out;
}

}  // namespace ts::lower

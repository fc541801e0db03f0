#include "inst_timing.h"

#include <algorithm>
#include <cmath>

#include "tilesweep/lower/reduction_fusion.h"
#include "tilesweep/target/instr_cost.h"

namespace ts::sim {

namespace {

using lower::Buffer;
using lower::Inst;
using lower::Program;

// The on-chip tile an instruction produces (or a store sends).
const Buffer* tile_of(const Program& p, const Inst& in) {
  if (in.out >= 0) return &p.buffers[in.out];
  if (!in.in.empty()) return &p.buffers[in.in.front()];
  return nullptr;
}

bool transposing(const lower::Access& a) {
  int last = -1;
  for (int d : a.tile_dim) {
    if (d < 0) continue;
    if (d < last) return true;
    last = d;
  }
  return false;
}

double cycles_to_ns(const target::Target& t, sem::Engine e, double cycles) {
  return cycles / t.engines.at(e).clock_hz * 1e9;
}

// Engine cycles of one copy: the formula, MIN_II and the fixed overheads of the fact sheet.
double compute_cycles(const Program& p, const target::Target& t, const Inst& in,
                      double formula_cycles) {
  double c = formula_cycles;
  const auto& o = t.overheads;
  if (in.engine != sem::Engine::Tensor) c = std::max(c, o.min_ii_cycles);
  if (in.engine == sem::Engine::Vector) c += o.vector_fixed_cycles;
  if (in.engine == sem::Engine::GpSimd && in.spec->engines.size() > 1) c += o.gpsimd_start_cycles;
  if (in.engine != sem::Engine::Tensor)
    for (int b : in.in)
      if (p.buffers[b].memory == sem::Memory::Psum) c += o.psum_read_cycles;
  return c;
}

InstTiming dma_timing(const Program& p, const target::Target& t, const Inst& in, double bytes,
                      double hbm_bytes_per_ns) {
  InstTiming r;
  r.engine = static_cast<int>(sem::Engine::Dma);
  r.dma = true;
  r.store = in.store;
  const Buffer& hbm = p.buffers[in.hbm.buffer];
  // An alias (a reshaped view) shares its root's storage: a load through it waits for the
  // stores to the root, and the other way round.
  r.hbm_buffer = hbm.alias >= 0 ? hbm.alias : in.hbm.buffer;
  double hbm_elems = 1;
  for (auto e : in.hbm.extent) hbm_elems *= static_cast<double>(e);
  r.hbm_bytes = hbm_elems * ir::dtype_bytes(hbm.dtype);
  const Buffer* tile = tile_of(p, in);
  double partitions = tile && !tile->shape.empty() ? static_cast<double>(tile->shape.front()) : 1;
  const auto& d = t.dma;
  int per_engine = std::max(1, t.sbuf.partitions / std::max(1, d.engines_per_core));
  r.dma_engines =
      std::clamp(static_cast<int>(std::ceil(partitions / per_engine)), 1, d.engines_per_core);
  double per_partition = bytes / partitions;
  double contiguous =
      static_cast<double>(in.hbm.contiguous_bytes(hbm.shape, ir::dtype_bytes(hbm.dtype)));
  double fraction = in.store ? d.transpose_fraction_sbuf : d.transpose_fraction_hbm;
  double eff = d.efficiency_at(std::min(contiguous, per_partition));
  if ((transposing(in.hbm) || in.spec->op.name == "dma_transpose") && fraction > 0)
    eff = fraction * d.efficiency_at(per_partition);
  double engine_bw = d.bytes_per_ns_per_engine;
  double aggregate = engine_bw * d.engines_per_core;
  if (hbm_bytes_per_ns < aggregate) engine_bw *= hbm_bytes_per_ns / aggregate;
  r.transfer_ns = bytes / r.dma_engines / (engine_bw * eff);
  return r;
}

// 2 when an operand or the result is a strided window whose step exceeds the target's full-rate
// stride in bytes (the SBUF/PSUM interface then runs at half its element rate, A1), else 1. A
// stride within it (every other f32 column: 8 B) costs nothing: the same element rate.
double stride_factor(const Program& p, const target::Target& t, const Inst& in) {
  auto slow = [&](int buffer, const lower::Window& w) {
    return !w.whole() && w.step > 1 &&
           w.step * ir::dtype_bytes(p.buffers[buffer].dtype) > t.sbuf.full_rate_stride_bytes;
  };
  bool half = in.out >= 0 && slow(in.out, in.out_window);
  for (std::size_t j = 0; j < in.in_window.size() && j < in.in.size(); ++j)
    half = half || slow(in.in[j], in.in_window[j]);
  return half ? 2.0 : 1.0;
}

// 1 when one tile operand of `in` is in PSUM and another in SBUF (S0: tensor_tensor then runs
// at one element per cycle, not two).
bool psum_sbuf(const Program& p, const Inst& in) {
  bool psum = false, sbuf = false;
  for (int b : in.in) {
    psum = psum || p.buffers[b].memory == sem::Memory::Psum;
    sbuf = sbuf || p.buffers[b].memory == sem::Memory::Sbuf;
  }
  return psum && sbuf;
}

// The formula with the variables the materializer computed when they are all there (no copy),
// else with the defaults filled in; x2 for an operand access strided past the full rate.
InstTiming compute_timing(const Program& p, const target::Target& t, const Inst& in) {
  InstTiming r;
  r.engine = static_cast<int>(in.engine);
  double cycles = 0;
  try {
    if (psum_sbuf(p, in)) {
      lower::CostVars v = in.vars;
      v.set("psum_sbuf", 1);
      cycles = formula_value(*in.spec, v);
    } else {
      cycles = formula_value(*in.spec, in.vars);
    }
  } catch (const UserError&) {
    cycles = formula_value(*in.spec, cost_vars(p, t, in));
  }
  cycles *= stride_factor(p, t, in);
  r.busy_ns = cycles_to_ns(t, in.engine, compute_cycles(p, t, in, cycles)) * std::max(1, in.repeat);
  r.ready_ns = cycles_to_ns(t, in.engine, t.sbuf.access_init_cycles);
  return r;
}

}  // namespace

lower::CostVars cost_vars(const Program& p, const target::Target& t, const Inst& in) {
  lower::CostVars v = in.vars;
  const Buffer* tile = tile_of(p, in);
  double elements = tile ? static_cast<double>(tile->elements()) : 1;
  double partitions = tile && !tile->shape.empty() ? static_cast<double>(tile->shape.front()) : 1;
  // Pattern dims from the operand tiles (k, m, n of nc_matmul; p, f of a [p, f] operand).
  for (std::size_t k = 0; k < in.in.size() && k < in.spec->op.shapes.size(); ++k) {
    const auto& items = in.spec->op.shapes[k].items;
    const auto& shape = p.buffers[in.in[k]].shape;
    if (items.size() != shape.size()) continue;
    for (std::size_t d = 0; d < items.size(); ++d)
      if (!items[d].group && !items[d].name.empty())
        v.set_default(items[d].name, static_cast<double>(shape[d]));
  }
  // fp32 by the operands (a bf16 matmul writes an fp32 PSUM tile but runs at the bf16 rate).
  bool fp32 = tile && tile->dtype == ir::DType::F32;
  if (!in.dma && !in.in.empty())
    fp32 = std::any_of(in.in.begin(), in.in.end(),
                       [&](int b) { return p.buffers[b].dtype == ir::DType::F32; });
  v.set_default("MIN_II", t.overheads.min_ii_cycles);
  v.set_default("P", partitions);
  v.set_default("N", elements / partitions);
  v.set_default("fp32", fp32 ? 1.0 : 0.0);
  v.set_default("bytes", tile ? static_cast<double>(tile->bytes()) : 0.0);
  v.set("psum_sbuf", !in.dma && psum_sbuf(p, in) ? 1.0 : 0.0);
  return v;
}

std::vector<InstTiming> inst_timings(const Program& p, const target::Target& t,
                                     double hbm_bytes_per_ns) {
  std::vector<InstTiming> out;
  out.reserve(p.insts.size());
  for (std::size_t i = 0; i < p.insts.size(); ++i) {
    const Inst& in = p.insts[i];
    double repeat = std::max(1, in.repeat);
    if (in.rides >= 0) {
      // A rider (lower/reduction_fusion.h): on its carrier's engine, the fused instruction's
      // cost less the carrier's, and no instruction of its own.
      const Inst& a = p.insts[static_cast<std::size_t>(in.rides)];
      InstTiming fused = compute_timing(p, t, lower::fused_instruction(p, static_cast<int>(i)));
      InstTiming alone = compute_timing(p, t, a);
      fused.busy_ns = std::max(0.0, fused.busy_ns - alone.busy_ns);
      fused.instructions = 0;
      out.push_back(fused);
      continue;
    } else if (!in.dma) {
      out.push_back(compute_timing(p, t, in));
    } else {
      auto vars = cost_vars(p, t, in);
      // A DMA moves the whole tile whatever its copies: `bytes` is the tile's (its window's when
      // the DMA fills or sends a window of a wider buffer).
      const lower::Buffer* tile = tile_of(p, in);
      if (tile) {
        const lower::Window* w =
            in.store ? (in.in_window.empty() ? nullptr : &in.in_window[0]) : &in.out_window;
        double bytes = static_cast<double>(tile->bytes());
        if (w && !w->whole() && !tile->shape.empty())
          bytes =
              static_cast<double>(tile->shape.front() * w->width * ir::dtype_bytes(tile->dtype));
        vars.set("bytes", bytes);
      }
      out.push_back(dma_timing(p, t, in, formula_value(*in.spec, vars), hbm_bytes_per_ns));
    }
    out.back().instructions = repeat;
  }
  return out;
}

}  // namespace ts::sim

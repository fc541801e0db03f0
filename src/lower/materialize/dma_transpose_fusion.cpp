// Instruction fusion dma_copy + transpose -> dma_transpose (contract): a DMA-engine instruction
// of a lowering applied to a tile just loaded from HBM becomes that load — the load takes the
// instruction and its access the instruction's orientation — instead of a second SBUF -> SBUF
// DMA. Returns false when the instruction is not such a DMA (emitted as usual), NoProgram for a
// DMA instruction on any other on-chip tile (not modeled).
#include <fmt/format.h>

#include <algorithm>

#include "emission.h"

namespace ts::lower {

Lowered<bool> fuse_dma_transpose(Emission& e, const sem::InstrSpec* spec, const ir::Node& step,
                                 std::vector<std::optional<Tile>>& tiles, std::size_t at) {
  if (spec->engines.size() != 1 || spec->engines[0] != sem::Engine::Dma || step.inputs.size() != 1)
    return false;
  const auto& source = tiles[step.inputs[0]];
  if (!source || source->buffer != e.fusable_load || !source->window.whole())
    return NoProgram{fmt::format("{} of an on-chip tile (SBUF -> SBUF DMA) is not modeled; it "
                                 "fuses with a load from HBM only",
                                 spec->op.name),
                     e.current_node};
  auto loaded_by = std::find_if(e.load_of.begin(), e.load_of.end(),
                                [&](const auto& l) { return l.first == source->buffer; });
  TS_CHECK(loaded_by != e.load_of.end(), "buffer {} has no load", source->buffer);
  Inst& load = e.builder.program().insts[static_cast<std::size_t>(loaded_by->second)];
  Buffer& b = e.builder.buffer(source->buffer);
  if (b.shape.size() != 2) return false;
  Shape shape = {b.shape[1], b.shape[0]};
  load.spec = spec;
  load.engine = sem::Engine::Dma;
  for (auto& d : load.hbm.tile_dim)
    if (d >= 0) d = 1 - d;
  const Shape loaded[] = {Shape(b.shape.begin(), b.shape.end())};
  auto v = target::instr_vars(e.target, *spec, loaded, shape, b.dtype);
  load.vars = v.vars;
  if (e.plan.notes) load.note += " (transposed by the DMA)";
  b.shape.assign(shape.begin(), shape.end());
  tiles[at] = Tile{source->buffer, {}, shape};
  return true;
}

}  // namespace ts::lower

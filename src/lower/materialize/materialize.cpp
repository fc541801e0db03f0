// materialize(): the driver over the passes (emission.h lists them): the HBM layout (the
// section's prefix, or computed here), then one loop nest per fused group in order, the copies of
// the outputs that are views (output_copy.cpp), and the program validated.
#include "tilesweep/lower/materialize.h"

#include <fmt/format.h>

#include <algorithm>

#include "emission.h"
#include "extent_of.h"
#include "tilesweep/lower/legal_engine.h"
#include "tilesweep/lower/psum_copy.h"
#include "tilesweep/lower/reduction_fusion.h"
#include "tilesweep/lower/software_pipeline.h"

namespace ts::lower {

GroupExtent group_extent(const ir::Kernel& k, const std::vector<int>& group,
                         const sem::DimEnv& dims) {
  return extent_of(
      k, group, [&](int n) { return ir::concrete_shape(k.nodes[n].shape, dims); },
      [&](int n) { return frame_of(k, n); });
}

namespace {

// The first node of the groups (or an operand of one) that has no frame: the loop nests place
// every one of them. fusion_groups' groups pass; a hand-made plan may not.
std::optional<NoProgram> unplaced_node(const ir::Kernel& k, const Prefix& prefix,
                                       const ProgramPlan& plan) {
  for (const auto& group : plan.groups)
    for (int node : group) {
      if (prefix.frame(node).rank < 0) return find_frame(k, node).no_program();
      for (int in : k.nodes[node].inputs)
        if (prefix.frame(in).rank < 0) return find_frame(k, in).no_program();
    }
  return std::nullopt;
}

// GroupTiling::pipeline: the loop of the nest's top-level items [first, last) that
// software_pipeline.h picks, pipelined. A nest with none under this candidate's lowerings runs
// unpipelined: the space offers the twin where the nest pipelines with its first lowerings
// (CandidateSpace::fits_pipelined), and the lowering digits are independent of the tiling's, so
// some lowerings of a `pipe` tiling (a transpose on the DMA queues, one trip) have no such loop.
void pipeline_nest(Program& p, std::size_t first, std::size_t last) {
  for (std::size_t i = first; i < last; ++i) {
    int nest = p.blocks[0].items[i].block;
    if (nest < 0) continue;
    std::optional<int> loop = loop_to_pipeline(p, nest);
    if (!loop) continue;
    if (auto no = pipeline_loop(p, *loop, *pipeline_split(p, *loop)))
      throw InternalError("pipelining a loop it accepted: " + *no);
  }
}

}  // namespace

Lowered<Program> materialize(const ir::Kernel& k, const sem::DimEnv& dims, const target::Target& t,
                             const ProgramPlan& plan) {
  std::optional<Lowered<Prefix>> own;
  if (!plan.prefix) {
    own = lay_out_hbm(k, dims, plan.groups);
    if (!*own) return own->no_program();
  }
  const Prefix& prefix = plan.prefix ? *plan.prefix : **own;
  if (auto no = unplaced_node(k, prefix, plan)) return *no;
  Emission e(k, dims, t, plan, prefix, plan.prefix ? prefix.program : std::move((*own)->program));
  std::vector<std::pair<std::size_t, std::size_t>> nests;  // each group's items in blocks[0]
  for (std::size_t g = 0; g < plan.groups.size(); ++g) {
    std::size_t first = e.builder.program().blocks[0].items.size();
    if (auto no = emit_group(e, static_cast<int>(g))) return *no;
    nests.emplace_back(first, e.builder.program().blocks[0].items.size());
  }
  if (auto no = emit_output_copies(e)) return *no;
  Program& p = e.builder.program();
  for (std::size_t g = 0; g < plan.groups.size(); ++g)
    if (plan.tiling.at(g).pipeline) pipeline_nest(p, nests[g].first, nests[g].second);
  p.cores = plan.cores;
  place_psum_values(p, t, plan);
  fill_psum_banks(p, t, plan);
  // The candidate's engine picks, kept where the target's rules allow them (operands in a memory
  // the engine reaches, its ALU operators): after this every instruction keeps the rules on its
  // engine (nothing below changes an instruction; tests check sampled programs instruction by
  // instruction with legality_breaches).
  for (auto& in : p.insts)
    if (auto no = make_engine_legal(p, in, t.legality)) return *no;
  if (plan.fuse_reductions) fuse_reductions(p, t);  // on the engines as they now are
  return std::move(e.builder).build();
}

void rebind(Program& p, const ProgramPlan& plan) {
  for (auto& in : p.insts)
    if (in.engine_node >= 0) {
      sem::Engine built = in.engine;
      const sem::InstrSpec* form = in.spec;
      int index = engine_index(plan, {in.engine_node, in.engine_copies});
      if (has_psum_copy_forms(p, in))  // psum_copy.h
        set_psum_copy_form(p, in, plan.picks.at(in.engine_node).copies());
      in.engine = engine_of(*in.spec, index);
      // The program was built legal with the same operand memories, so some engine of each
      // instruction keeps the rules (the one it has when the pick did not change).
      bool changed = in.engine != built || in.spec != form;
      if (changed && plan.legality && make_engine_legal(p, in, *plan.legality))
        throw InternalError(fmt::format("rebind: no legal engine for {}", in.spec->op.name));
    }
  if (plan.fuse_reductions && plan.target)
    fuse_reductions(p, *plan.target);
  else
    for (auto& in : p.insts) in.rides = -1, in.fused = nullptr;
  for (auto& b : p.buffers)
    if (b.bufs_cap > 0)
      b.bufs = std::max(
          b.min_bufs, std::min(b.bufs_cap, plan.tiling.at(static_cast<std::size_t>(b.nest)).bufs));
  if (plan.target) fill_psum_banks(p, *plan.target, plan);
}

Lowered<std::shared_ptr<const Prefix>> make_prefix(const ir::Kernel& k, const sem::DimEnv& dims,
                                                   const target::Target& t,
                                                   const std::vector<std::vector<int>>& groups,
                                                   std::vector<const ir::Kernel*> lowerings) {
  Lowered<Prefix> laid_out = lay_out_hbm(k, dims, groups);
  if (!laid_out) return laid_out.no_program();
  Prefix& p = *laid_out;
  std::sort(lowerings.begin(), lowerings.end());
  lowerings.erase(std::unique(lowerings.begin(), lowerings.end()), lowerings.end());
  for (const ir::Kernel* lowering : lowerings)
    if (lowering) p.lowerings.emplace_back(lowering, prepare_lowering(*lowering, t.isa));
  return std::shared_ptr<const Prefix>(std::make_shared<const Prefix>(std::move(p)));
}

}  // namespace ts::lower

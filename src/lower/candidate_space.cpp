#include "tilesweep/lower/candidate_space.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <set>

#include "tilesweep/ir/interpreter.h"
#include "tilesweep/lower/core_reduction.h"
#include "tilesweep/lower/core_split.h"
#include "tilesweep/lower/fusion.h"
#include "tilesweep/lower/partition_fold.h"
#include "tilesweep/lower/psum_copy.h"
#include "tilesweep/lower/row_step_fold.h"
#include "tilesweep/lower/software_pipeline.h"
#include "tilesweep/lower/split_reduction.h"
#include "tilesweep/target/instr_cost.h"

namespace ts::lower {

// A section's parts, each a small value: which programs' structure (the form), the
// instruction programs kept per op, the instruction-fusion pairs, the engine axes.
struct CandidateSpace::SectionForm {
  int variant = 0;
  bool fused = false;
  bool swapped = false;  // fused, with swap sites computed transposed (layout_swap.h)
  std::vector<std::vector<int>> groups;  // fusion_groups()
  std::vector<int> transposed;           // the swap sites' nodes computed transposed, sorted
  std::shared_ptr<const Prefix> prefix;  // what every program of the section starts with
};

namespace {

// True when some instruction of `program` has a cost that names `psum_sbuf` (one input in PSUM,
// the other in SBUF: faster on Vector). The formula is walked with a stack of its nodes.
bool reads_psum_faster(const ir::Kernel& program, const sem::InstrTable& isa) {
  for (const auto& n : program.nodes) {
    const sem::InstrSpec* in = isa.find(n.op);
    if (!in || !in->cost) continue;
    std::vector<const sem::Expr*> todo = {in->cost.get()};
    while (!todo.empty()) {
      const sem::Expr* e = todo.back();
      todo.pop_back();
      if (e->kind == sem::Expr::Name && e->name == "psum_sbuf") return true;
      for (const auto& a : e->args) todo.push_back(a.get());
    }
  }
  return false;
}

}  // namespace

struct CandidateSpace::OpLowerings {
  std::vector<int> nodes;                          // compute node per op
  std::vector<std::string> labels;                 // per op
  std::vector<std::vector<const Lowering*>> kept;  // per op, cheapest first
  std::vector<int> engines;                        // per op: engine options
  // A fused producer's kept lowering -> its pre and fused root programs (a swapped form).
  std::map<const Lowering*, std::pair<const ir::Kernel*, const ir::Kernel*>> split;
  // Lowerings of a matmul that read its left operand's source as the stationary operand.
  std::set<const Lowering*> stationary;
  // A matmul's kept lowering that splits at its root (split_at_root): its pre and root
  // programs, for nests that hoist pre out of the N loop (GroupTiling::hoist). Shared by copies.
  std::map<const Lowering*, std::shared_ptr<const SplitLowering>> hoistable;
  // A free-axis scan's chunk step (chunked_scan.h), for nests that cut its row into chunks.
  std::map<int, const ir::Kernel*> chunk;

  // True when some matmul among `nodes` keeps a lowering that hoisting changes (one that splits,
  // not computed transposed): only then is GroupTiling::hoist a choice.
  bool hoists(const std::vector<int>& group) const {
    for (std::size_t j = 0; j < kept.size(); ++j)
      if (std::count(group.begin(), group.end(), nodes[j]))
        for (const Lowering* l : kept[j])
          if (hoistable.count(l) && !split.count(l)) return true;
    return false;
  }

  // Every lowering program a pick of the section may name.
  std::vector<const ir::Kernel*> programs() const {
    std::vector<const ir::Kernel*> out;
    for (std::size_t j = 0; j < kept.size(); ++j)
      for (std::size_t l = 0; l < kept[j].size(); ++l) {
        OpPick p = pick(j, l);
        out.push_back(p.lowering);
        out.push_back(p.pre);
        out.push_back(p.hoist_pre);
        out.push_back(p.hoist_root);
        out.push_back(p.chunk);
      }
    return out;
  }

  // The pick of op j with its lowering l.
  OpPick pick(std::size_t j, std::size_t l, int engine = 0, int copies = -1) const {
    const Lowering* low = kept[j][l];
    auto step = chunk.find(nodes[j]);
    if (auto it = split.find(low); it != split.end()) {
      OpPick p{it->second.second, engine, copies, it->second.first};
      if (step != chunk.end()) p.chunk = step->second;
      return p;
    }
    OpPick p{&low->program, engine, copies, nullptr, stationary.count(low) > 0};
    if (step != chunk.end()) p.chunk = step->second;
    if (auto it = hoistable.find(low); it != hoistable.end()) {
      p.hoist_pre = &it->second->pre;
      p.hoist_root = &it->second->root_program;
    }
    return p;
  }
};

// The (producer, consumer) pairs fusable by one instruction, each with its cheapest one.
// A region (PairChoice::absorbed) absorbs several ops into its root: `absorbed` lists them
// per entry (a pair's: its producer), `operands` the region's lowering parameters (a pair's:
// empty, the producer's inputs).
struct CandidateSpace::InstructionPairs {
  std::vector<std::pair<int, int>> nodes;
  std::vector<const Lowering*> lowering;
  std::vector<std::string> labels;
  std::vector<std::vector<int>> absorbed;
  std::vector<std::vector<std::pair<int, int>>> operands;
};

// The engine digits: default engines or the alternates too, and with engines chosen per op
// (SpaceOptions::engines_per_op) per op its (lowering, engine) pairs — each kept lowering with
// each engine its instructions allow; one digit per op over them.
struct CandidateSpace::EngineAxes {
  int policies = 1;
  bool per_op = false;
  std::vector<std::vector<std::pair<int, int>>> op_choices;
};

struct CandidateSpace::SpaceSection {
  SectionForm form;
  OpLowerings ops;
  InstructionPairs pairs;
  EngineAxes engine;
  std::vector<std::vector<GroupTiling>> tilings;  // per group, feasible
  std::int64_t first = 0, size = 0;
};

CandidateSpace::~CandidateSpace() = default;
CandidateSpace::CandidateSpace(CandidateSpace&&) noexcept = default;

namespace {

// Distinct instruction sequences of an op, cheapest first at a nominal 128 x 512 tile.
std::vector<const Lowering*> kept_lowerings(const SynthesisResult& r, const target::Target& t,
                                            int max_kept) {
  std::vector<std::pair<double, const Lowering*>> costed;
  for (const auto& l : r.lowerings) {
    sem::DimEnv env;
    for (const auto& d : l.program.dims) env[d] = d == "P" ? 128 : 512;
    costed.push_back({target::program_ns(t, l.program, env), &l});
  }
  std::stable_sort(costed.begin(), costed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const Lowering*> out;
  std::set<std::string> seen;
  for (const auto& [ns, l] : costed) {
    std::string key;
    for (const auto& n : l->program.nodes)
      if (t.isa.find(n.op)) key += n.op + ";";
    if (!seen.insert(key).second) continue;
    out.push_back(l);
    if (static_cast<int>(out.size()) >= max_kept) break;
  }
  return out;
}

int engine_options(const std::vector<const Lowering*>& ls, const target::Target& t) {
  std::size_t most = 1;
  for (const auto* l : ls)
    for (const auto& n : l->program.nodes)
      if (const auto* in = t.isa.find(n.op)) most = std::max(most, in->engines.size());
  return static_cast<int>(std::min<std::size_t>(most, 2));
}

std::vector<std::int64_t> powers_dividing(std::int64_t n, std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> out;
  for (std::int64_t v = lo; v <= hi && v <= n; v *= 2)
    if (n % v == 0) out.push_back(v);
  return out;
}

std::int64_t largest_divisor(std::int64_t n, std::int64_t limit) {
  for (std::int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

// The store widths of a matmul nest's N tile `f` (GroupTiling::store): one store per N tile (0),
// or the widest power-of-two multiple of f up to kWidestStore columns that divides every
// matmul's N (none when f is already that wide).
constexpr std::int64_t kWidestStore = 2048;
std::vector<std::int64_t> store_widths(const GroupExtent& e, std::int64_t f) {
  std::vector<std::int64_t> out = {0};
  if (!e.has_matmul || f <= 0) return out;
  std::int64_t n = e.matmul_n.front();
  for (auto x : e.matmul_n) n = std::gcd(n, x);
  std::int64_t widest = 0;
  for (std::int64_t w = 2 * f; w <= std::min(n, kWidestStore); w *= 2)
    if (n % w == 0) widest = w;
  if (widest > 0) out.push_back(widest);
  return out;
}

// Every tile configuration of a group before capacity pruning.
std::vector<GroupTiling> group_tilings(const GroupExtent& e, const SpaceOptions& o) {
  std::int64_t pt = largest_divisor(e.rows, 128);
  std::vector<std::int64_t> blocks = {1};
  if (e.has_matmul)
    for (std::int64_t b = 2; b <= o.max_block; b *= 2)
      if (e.rows % (pt * b) == 0) blocks.push_back(b);
  std::vector<std::int64_t> frees = {0};
  if (e.has_matmul) {
    std::int64_t n = e.matmul_n.front();
    for (auto x : e.matmul_n) n = std::gcd(n, x);
    frees = powers_dividing(n, 128, 512);
    if (frees.empty()) frees = {largest_divisor(n, 512)};
  } else if (e.elementwise) {
    frees = powers_dividing(e.cols, 512, 8192);
    if (frees.empty() || frees.back() != e.cols) frees.push_back(e.cols);
  }
  std::vector<GroupTiling> out;
  for (auto b : blocks)
    for (auto f : frees)
      for (bool resident : {false, true}) {
        // A resident right-hand side pays where the nest has more than one strip.
        if (resident && (!e.has_matmul || e.rows <= pt * b)) continue;
        for (std::int64_t store : store_widths(e, f)) {
          out.push_back({pt, b, f, o.bufs.front(), false, false, resident, store});  // shallowest
          // Hoisting x^T out of the N loop pays where some matmul has more than one N tile.
          if (std::any_of(e.matmul_n.begin(), e.matmul_n.end(),
                          [&](std::int64_t n) { return n > f; }))
            out.push_back({pt, b, f, o.bufs.front(), false, true, resident, store});
        }
      }
  return out;
}

// True when a program has a copy (an instruction whose engine the policy chooses for the copies)
// that could run on another engine.
bool copies_can_move(const Program& p) {
  return std::any_of(p.insts.begin(), p.insts.end(), [](const Inst& in) {
    return in.engine_copies && in.engine_node >= 0 && in.spec->engines.size() > 1;
  });
}

// Dominance pruning of the hoisting, resident and store dimensions: a tiling is dropped when a
// twin (the same blocks, free tile and spill) that hoists x^T out of the N loop
// (GroupTiling::hoist), keeps the right-hand sides resident (GroupTiling::resident) or stores
// wider (GroupTiling::store) where it does not fits as well. Given the same blocks, the hoisted
// program runs the same matmuls with pre(x) (a transpose, a load) once per strip instead of once
// per N tile, the resident one loads each right-hand side once instead of once per strip, and the
// wider store moves the same bytes in fewer, longer DMAs, so none does more work on any engine;
// they only hold more SBUF. (A wider store holds its N tiles until the last is evacuated: at some
// depths the narrower one schedules better — trn1 bmm, free=512 at bufs=3: 4,652.7 us per N
// tile, 4,843.9 us per 2048 columns — a loss the pruning accepts: without it matmul_add_rmsnorm's
// unfused sections grow 2.2x.) A resident twin loads all of y before the first strip instead
// of alongside it, so it replaces the tiling only where the nest has at least 4 strips (the start
// costs at most a quarter of the loads it saves); with 2 or 3 both stay. Likewise a panel twin
// loads its first panel before any matmul of it can start, so it replaces the tiling only where
// the nest loads at least 4 panels (strips x N tiles): with one strip of one N tile the whole
// right-hand side would arrive before the first matmul (trn1 matmul M=128, K=8192, N=128 at
// bufs=2: 116.55 us in a panel, 95.56 us streamed by K tile). "Fits as well" is at
// every multi-buffering depth: `deepest(t)` is the deepest depth (an index into the options'
// depths, -1: none) at which t fits, and a twin that fits only shallower keeps t (the depth is a
// digit of its own, so t at the deeper depths would be lost). Each tiling's depth is found once.
template <class Deepest>
std::vector<GroupTiling> drop_dominated(std::vector<GroupTiling> ok, const GroupExtent& extent,
                                        Deepest deepest) {
  auto strips = [&](const GroupTiling& t) { return extent.rows / (t.pt * t.block); };
  auto panels = [&](const GroupTiling& t) {
    std::int64_t n = 0;
    for (auto cols : extent.matmul_n) n = std::max(n, cols);
    return strips(t) * (t.free > 0 ? (n + t.free - 1) / t.free : 1);
  };
  auto lighter = [&](const GroupTiling& h, const GroupTiling& t) {
    return h.pt == t.pt && h.block == t.block && h.free == t.free && h.spill == t.spill &&
           h.online == t.online && h.hoist >= t.hoist && h.resident >= t.resident &&
           h.store >= t.store && h.panel >= t.panel && h.in_place == t.in_place &&
           h.pipeline == t.pipeline && h.onchip_steps == t.onchip_steps &&
           h.pe_broadcast == t.pe_broadcast && h.psum_partials == t.psum_partials &&
           h.psum_values == t.psum_values && h.psum_loads == t.psum_loads &&
           (h.hoist != t.hoist || h.resident != t.resident || h.store != t.store ||
            h.panel != t.panel) &&
           (h.resident == t.resident || strips(t) >= 4) && (h.panel == t.panel || panels(t) >= 4);
  };
  std::vector<std::optional<int>> depth(ok.size());
  auto depth_of = [&](std::size_t i) {
    if (!depth[i]) depth[i] = deepest(ok[i]);
    return *depth[i];
  };
  std::vector<GroupTiling> out;
  for (std::size_t i = 0; i < ok.size(); ++i) {
    bool dominated = false;
    for (std::size_t h = 0; h < ok.size() && !dominated; ++h)
      dominated = lighter(ok[h], ok[i]) && depth_of(h) >= depth_of(i);
    if (!dominated) out.push_back(ok[i]);
  }
  return out;
}

// True when some matmul of `group` has its result stored to HBM and not read in the group:
// only then is GroupTiling::store a choice.
bool stores_matmul_result(const ir::Kernel& k, const std::vector<int>& group) {
  return std::any_of(group.begin(), group.end(), [&](int n) {
    return is_matmul(k.nodes[n]) && std::none_of(group.begin(), group.end(), [&](int m) {
             const auto& in = k.nodes[m].inputs;
             return std::find(in.begin(), in.end(), n) != in.end();
           });
  });
}

// True when some matmul of `group` reads its right-hand side from HBM (not computed in the
// group): only then is GroupTiling::resident a choice.
bool reads_rhs_from_hbm(const ir::Kernel& k, const std::vector<int>& group) {
  return std::any_of(group.begin(), group.end(), [&](int n) {
    return is_matmul(k.nodes[n]) &&
           std::find(group.begin(), group.end(), k.nodes[n].inputs[1]) == group.end();
  });
}

// Panel loads (GroupTiling::panel): after each tiling whose right-hand sides are not resident,
// its twin loading them in panels, where a matmul of `group` reads its right-hand side from HBM
// and a panel holds more than one of its tiles: computed transposed (`transposed`, sorted), more
// than one 128-column chunk; in a matmul nest, more than one K tile (the N tile's K tiles all
// loaded ahead, not one multi-buffered tile at a time).
void add_panel_tilings(std::vector<GroupTiling>& tilings, const ir::Kernel& k,
                       const std::vector<int>& group, const std::vector<int>& transposed,
                       const sem::DimEnv& dims) {
  bool panels = std::any_of(group.begin(), group.end(), [&](int n) {
    if (!is_matmul(k.nodes[n]) || std::count(group.begin(), group.end(), k.nodes[n].inputs[1]))
      return false;
    if (std::binary_search(transposed.begin(), transposed.end(), n)) {
      std::int64_t cols = group_extent(k, {n}, dims).matmul_n.front();
      return rhs_panel_columns(cols) > largest_divisor(cols, 128);
    }
    auto y = ir::concrete_shape(k.nodes[k.nodes[n].inputs[1]].shape, dims);
    std::int64_t K = y[y.size() - 2];
    return K > largest_divisor(K, 128);
  });
  if (!panels) return;
  std::vector<GroupTiling> out;
  for (const GroupTiling& t : tilings) {
    out.push_back(t);
    if (t.resident) continue;
    out.push_back(t);
    out.back().panel = true;
  }
  tilings = std::move(out);
}

// Whether an op of `group` reads a slice that steps along some axis, or a repeat along the free
// axis (a candidate for reading it on chip through a strided or repeating window,
// GroupTiling::onchip_steps).
bool reads_stepped_slice(const ir::Kernel& k, const std::vector<int>& group,
                         const sem::DimEnv& dims) {
  for (int n : group)
    for (int in : k.nodes[static_cast<std::size_t>(n)].inputs) {
      const ir::Node& s = k.nodes[static_cast<std::size_t>(in)];
      if (s.op == "repeat" &&  // along the free (last) axis
          std::get<std::int64_t>(s.attrs.at("axis")) + 1 ==
              static_cast<std::int64_t>(s.shape.size()))
        return true;
      if (s.op != "slice") continue;
      for (const auto& d : std::get<std::vector<sem::Dim>>(s.attrs.at("step")))
        if (auto v = d.evaluate(dims); !v || *v != 1) return true;
    }
  return false;
}

// Whether a compute instruction of `p` reads or writes a strided (or repeating) window.
bool reads_strided_window(const Program& p) {
  return std::any_of(p.insts.begin(), p.insts.end(), [](const Inst& in) {
    return !in.dma && std::any_of(in.in_window.begin(), in.in_window.end(), [](const Window& w) {
      return !w.whole() && (w.step > 1 || w.repeat > 1);
    });
  });
}

// What the simulator's capacity check counts (sim/capacity.h), for the nest of group `g` of the
// plan's `groups`: whether that nest fits beside what the program holds whatever the other
// groups' tilings (nest_use). The nests run one after another, so a candidate fits iff each of
// its groups' tilings does: each group's tilings are judged alone, not beside the other groups'
// first tilings (a first tiling that does not fit would refuse every tiling of every group).
OnChipUse group_use(const Program& p, const target::Target& t, std::size_t g, std::size_t groups) {
  return nest_use(p, t.psum.bank_bytes, static_cast<int>(g), static_cast<int>(groups));
}
bool fits(const Program& p, const target::Target& t, std::size_t g, std::size_t groups) {
  OnChipUse u = group_use(p, t, g, groups);
  return u.sbuf_bytes <= t.sbuf.usable_bytes_per_partition && u.psum_banks <= t.psum.banks;
}

// Why a group keeps none of its tilings (CandidateSpace::feasible_tilings): the tilings that
// need the least SBUF and the fewest PSUM banks among those that do not fit, and why an online
// tiling has no program.
class RefusedTilings {
 public:
  void too_big(const GroupTiling& t, const OnChipUse& u) {
    if (!sbuf_ || u.sbuf_bytes < sbuf_->second.sbuf_bytes) sbuf_ = {t, u};
    if (!psum_ || u.psum_banks < psum_->second.psum_banks) psum_ = {t, u};
  }
  void no_program(const GroupTiling& t, const NoProgram& why) {
    if (!online_) online_ = {t, why.reason};
  }
  std::string reason(std::size_t tilings, const target::Target& target) const {
    std::string out = fmt::format("none of its {} tilings fits on chip", tilings);
    if (sbuf_) {
      out += fmt::format("; the least SBUF: {} B per partition of {} ({}, {} PSUM banks)",
                         sbuf_->second.sbuf_bytes, target.sbuf.usable_bytes_per_partition,
                         tiling_words(sbuf_->first), sbuf_->second.psum_banks);
      if (psum_->second.psum_banks > target.psum.banks)
        out += fmt::format("; the fewest PSUM banks: {} of {} ({})", psum_->second.psum_banks,
                           target.psum.banks, tiling_words(psum_->first));
    }
    if (online_)
      out += fmt::format("; online tilings have no program ({}: {})", tiling_words(online_->first),
                         online_->second);
    return out;
  }

 private:
  static std::string tiling_words(const GroupTiling& t) {
    std::string w = fmt::format("pt {} block {} free {}", t.pt, t.block, t.free);
    if (t.online > 0) w += fmt::format(" online {}", t.online);
    if (t.spill) w += " spilled";
    if (t.resident) w += " resident";
    if (t.hoist) w += " hoisted";
    if (t.panel) w += " panels";
    if (t.store > 0) w += fmt::format(" store {}", t.store);
    return w;
  }
  std::optional<std::pair<GroupTiling, OnChipUse>> sbuf_, psum_;
  std::optional<std::pair<GroupTiling, std::string>> online_;
};

// The ops of a group in words: "matmul@5, div@5".
std::string group_label(const ir::Kernel& k, const std::vector<int>& group) {
  std::string out;
  for (int n : group) {
    const ir::Node& node = k.nodes[static_cast<std::size_t>(n)];
    out += fmt::format("{}{}@{}", out.empty() ? "" : ", ", node.op, node.loc.line);
  }
  return out;
}

}  // namespace

const char* CandidateSpace::form_name(const SpaceSection& s) {
  return s.form.swapped ? "fused transposed" : s.form.fused ? "fused" : "unfused";
}

// Stage 1, per variant: every op's kept lowerings and engine options; nullopt (the reason
// recorded) when an op has none.
std::optional<CandidateSpace::OpLowerings> CandidateSpace::op_lowerings(int variant) {
  const KernelChoices& kc = *variants_[static_cast<std::size_t>(variant)].choices;
  OpLowerings ops;
  for (const auto& op : kc.ops) {
    if (!op.synthesis || op.synthesis->lowerings.empty()) {
      counts_.unsupported.push_back(fmt::format("variant {}: {} has no lowering{}", variant,
                                                op.label,
                                                op.note.empty() ? "" : " (" + op.note + ")"));
      return std::nullopt;
    }
    ops.nodes.push_back(op.node);
    ops.labels.push_back(op.label);
    ops.kept.push_back(kept_lowerings(*op.synthesis, target_, options_.max_lowerings));
    if (op.stationary) {  // first: no transpose at all
      auto plain = kept_lowerings(*op.stationary, target_, 1);
      ops.stationary.insert(plain.begin(), plain.end());
      ops.kept.back().insert(ops.kept.back().begin(), plain.begin(), plain.end());
    }
    ops.engines.push_back(engine_options(ops.kept.back(), target_));
    for (const auto& sc : kc.scans)
      if (sc.node == op.node && sc.usable())
        ops.chunk[op.node] = &sc.step->lowerings.front().program;
    if (is_matmul(variants_[static_cast<std::size_t>(variant)].kernel->nodes[op.node]))
      for (const Lowering* l : ops.kept.back())
        if (auto split = split_at_root(l->program, target_.isa))
          ops.hoistable[l] = std::make_shared<const SplitLowering>(std::move(*split));
  }
  return ops;
}

// The swap sites whose values all run in one loop nest, with the consumer: their producers take
// their fused lowerings, the consumer its lowerings of a transposed left operand. False when none.
bool CandidateSpace::apply_swaps(SpaceSection& s, const KernelChoices& kc) const {
  std::map<int, int> group;
  for (std::size_t g = 0; g < s.form.groups.size(); ++g)
    for (int n : s.form.groups[g]) group[n] = static_cast<int>(g);
  const auto& nodes_of_ops = s.ops.nodes;
  auto op_of = [&](int node) {
    return static_cast<std::size_t>(std::find(nodes_of_ops.begin(), nodes_of_ops.end(), node) -
                                    nodes_of_ops.begin());
  };
  for (const auto& sc : kc.swaps) {
    std::vector<int> nodes = sc.site.transposed();
    nodes.push_back(sc.site.consumer);
    if (!std::all_of(nodes.begin(), nodes.end(),
                     [&](int n) { return group.count(n) && group[n] == group[sc.site.consumer]; }))
      continue;
    for (const auto& fp : sc.producers) {
      std::size_t j = op_of(fp->node);
      s.ops.kept[j] = kept_lowerings(fp->fused, target_, options_.max_lowerings);
      for (const Lowering* l : s.ops.kept[j]) {
        auto i = static_cast<std::size_t>(l - fp->fused.lowerings.data());
        s.ops.split[l] = {&fp->pre[i], fp->root[i]};
      }
      s.ops.engines[j] = engine_options(s.ops.kept[j], target_);
    }
    std::size_t q = op_of(sc.site.consumer);
    s.ops.kept[q] = kept_lowerings(*sc.use, target_, options_.max_lowerings);
    s.ops.engines[q] = engine_options(s.ops.kept[q], target_);
    s.form.transposed.insert(s.form.transposed.end(), nodes.begin(), nodes.end() - 1);
  }
  std::sort(s.form.transposed.begin(), s.form.transposed.end());
  s.form.swapped = !s.form.transposed.empty();
  return s.form.swapped;
}

// Keeps the product of lowering counts within options_.max_instruction_choices: the op with
// the most lowerings gives up its costliest one until it fits (a kernel of 15 ops would
// otherwise multiply its choices into the millions).
void CandidateSpace::cap_lowerings(SpaceSection& s) const {
  auto& kept = s.ops.kept;
  for (;;) {
    double product = 1;
    std::size_t widest = 0;
    for (std::size_t j = 0; j < kept.size(); ++j) {
      product *= static_cast<double>(kept[j].size());
      if (kept[j].size() > kept[widest].size()) widest = j;
    }
    if (product <= options_.max_instruction_choices || kept.empty() || kept[widest].size() <= 1)
      return;
    kept[widest].pop_back();
  }
}

// Tile configurations of a section: the product over fused nests, the most options of any one
// nest when unfused (independent nests share one policy digit instead of multiplying).
std::int64_t CandidateSpace::tiling_radix(const SpaceSection& s) {
  std::int64_t r = 1;
  for (const auto& t : s.tilings)
    r = s.form.fused ? r * static_cast<std::int64_t>(t.size())
                     : std::max<std::int64_t>(r, t.size());
  for (const auto& t : s.tilings)
    if (t.empty()) return 0;
  return r;
}

// The pairs an instruction can fuse inside one loop nest, each with its cheapest proved
// instruction that has a program at this shape.
CandidateSpace::InstructionPairs CandidateSpace::instruction_pairs(const SpaceSection& s,
                                                                   const KernelChoices& kc) const {
  std::map<int, int> group;
  for (std::size_t g = 0; g < s.form.groups.size(); ++g)
    for (int n : s.form.groups[g]) group[n] = static_cast<int>(g);
  InstructionPairs pairs;
  const auto& transposed = s.form.transposed;
  for (const auto& pc : kc.pairs) {
    std::vector<int> absorbed = pc.absorbed.empty() ? std::vector<int>{pc.producer} : pc.absorbed;
    bool apart = std::any_of(absorbed.begin(), absorbed.end(), [&](int n) {
      return group.at(n) != group.at(pc.consumer) ||
             std::binary_search(transposed.begin(), transposed.end(), n);
    });
    if (apart || std::binary_search(transposed.begin(), transposed.end(), pc.consumer)) continue;
    auto kept = kept_lowerings(*pc.synthesis, target_, 1);
    if (kept.empty()) continue;
    pairs.nodes.push_back({pc.producer, pc.consumer});
    pairs.lowering.push_back(kept.front());
    pairs.labels.push_back(pc.label);
    pairs.absorbed.push_back(std::move(absorbed));
    pairs.operands.push_back(pc.operands);
  }
  return pairs;
}

// Drops the lowerings that have no program at this shape (an instruction whose limits the
// tile exceeds in a way that cannot be split, like a 32 x 32 transpose of a 128-row tile).
std::optional<NoProgram> CandidateSpace::drop_unplaceable(SpaceSection& s, const ir::Kernel& k,
                                                          ProgramPlan& plan) const {
  auto op_of = [&](int node) {
    for (std::size_t j = 0; j < s.ops.nodes.size(); ++j)
      if (s.ops.nodes[j] == node) return static_cast<int>(j);
    return -1;
  };
  // First a working pick for every op: drop the lowering of whichever op fails until none does.
  for (;;) {
    Lowered<Program> program = lower::materialize(k, dims_, target_, plan);
    if (program) break;
    const NoProgram& why = program.no_program();
    int j = op_of(why.node);
    if (j < 0) return why;
    auto& kept = s.ops.kept[static_cast<std::size_t>(j)];
    kept.erase(kept.begin());
    if (kept.empty()) return NoProgram{fmt::format("{}: {}", s.ops.labels[j], why.reason)};
    plan.picks[s.ops.nodes[j]] = s.ops.pick(static_cast<std::size_t>(j), 0);
  }
  // Then every other lowering of each op beside the working picks.
  for (std::size_t j = 0; j < s.ops.nodes.size(); ++j) {
    std::vector<const Lowering*> ok = {s.ops.kept[j][0]};
    for (std::size_t l = 1; l < s.ops.kept[j].size(); ++l) {
      ProgramPlan p = plan;
      p.picks[s.ops.nodes[j]] = s.ops.pick(j, l);
      if (lower::materialize(k, dims_, target_, p)) ok.push_back(s.ops.kept[j][l]);
    }
    s.ops.kept[j] = ok;
  }
  return std::nullopt;
}

// The tilings of each group that fit on chip with the plan's other choices: as they are, or in
// a fused form with the nest's matmul results spilled to HBM.
Lowered<std::vector<std::vector<GroupTiling>>> CandidateSpace::feasible_tilings(
    const ir::Kernel& k, bool fused, const ProgramPlan& plan, const ProgramPlan& values_plan,
    const std::vector<std::vector<GroupTiling>>& all) const {
  std::vector<std::vector<GroupTiling>> feasible;
  for (std::size_t g = 0; g < all.size(); ++g) {
    auto deepest = [&](GroupTiling t) {
      for (int d = static_cast<int>(options_.bufs.size()) - 1; d >= 0; --d) {
        ProgramPlan p = plan;
        t.bufs = options_.bufs[static_cast<std::size_t>(d)];
        p.tiling[g] = t;
        Lowered<Program> program = lower::materialize(k, dims_, target_, p);
        if (program && fits(*program, target_, g, all.size())) return d;
      }
      return -1;
    };
    std::vector<GroupTiling> ok;
    RefusedTilings refused;
    for (const auto& t : all[g]) {
      ProgramPlan p = plan;
      p.tiling[g] = t;
      Lowered<Program> program = lower::materialize(k, dims_, target_, p);
      if (!program && t.online > 0) {  // an online form this group has no program in
        refused.no_program(t, program.no_program());
        continue;
      }
      if (!program) return program.no_program();
      if (fits(*program, target_, g, all.size())) {
        ok.push_back(t);
      } else {
        refused.too_big(t, group_use(*program, target_, g, all.size()));
        if (fused) {  // spilling the nest's matmul results to HBM may make it fit
          p.tiling[g].spill = true;
          Lowered<Program> spilled = lower::materialize(k, dims_, target_, p);
          if (!spilled) return spilled.no_program();
          bool spills = std::any_of(spilled->buffers.begin(), spilled->buffers.end(),
                                    [](const Buffer& b) { return b.spill; });
          if (spills && fits(*spilled, target_, g, all.size()))
            ok.push_back(p.tiling[g]);
          else if (spills)
            refused.too_big(p.tiling[g], group_use(*spilled, target_, g, all.size()));
        }
      }
      // (Unfused nests share one tiling digit: a twin in one would re-pair the others' tilings.)
      if (options_.in_place && (fused || all.size() == 1) &&
          in_place_pays(k, plan, g, t, *program, deepest)) {
        ok.push_back(t);
        ok.back().in_place = true;
      }
      if (options_.pipeline && (fused || all.size() == 1) && !t.spill &&
          fits_pipelined(k, plan, g, t)) {
        ok.push_back(t);
        ok.back().pipeline = true;
      }
      if (options_.onchip_steps && (fused || all.size() == 1))
        if (auto twin = onchip_steps_twin(k, plan, g, t)) ok.push_back(*twin);
      if (options_.psum_operands && (fused || all.size() == 1))
        for (const auto& twin : psum_operand_twins(k, plan, values_plan, g, t)) ok.push_back(twin);
    }
    if (ok.empty())  // the section would have no candidate: say which group and why
      return NoProgram{fmt::format("group {} ({}): {}", g, group_label(k, plan.groups[g]),
                                   refused.reason(all[g].size(), target_))};
    feasible.push_back(
        drop_dominated(std::move(ok), group_extent(k, plan.groups[g], dims_), deepest));
  }
  return feasible;
}

// Software-pipelined twins (GroupTiling::pipeline): tiling t of group g also with its loop around
// the first PSUM evacuation pipelined, where the nest has such a loop with the plan's lowerings
// (it reads a copy one version back) and the twin fits.
bool CandidateSpace::fits_pipelined(const ir::Kernel& k, const ProgramPlan& plan, std::size_t g,
                                    const GroupTiling& t) const {
  ProgramPlan p = plan;
  p.tiling[g] = t;
  p.tiling[g].pipeline = true;
  Lowered<Program> twin = lower::materialize(k, dims_, target_, p);
  return twin && fits(*twin, target_, g, plan.groups.size()) && pipelined(*twin);
}

// In-place twins (GroupTiling::in_place): tiling t of group g (materialized: `plain`) also with
// its element-wise ops writing over dead operand tiles, where that holds less SBUF and fits at a
// deeper multi-buffering depth than t (or where t does not fit at all). Where t fits as deep the
// twin is dropped: it runs the same instructions on the same engines with more dependences (an
// in-place write waits for every reader of its operand, where its own buffer would only wait
// for the readers of that buffer's previous rotation), so it never finishes earlier.
bool CandidateSpace::in_place_pays(const ir::Kernel& k, const ProgramPlan& plan, std::size_t g,
                                   const GroupTiling& t, const Program& plain,
                                   const std::function<int(GroupTiling)>& deepest) const {
  const auto& group = plan.groups[g];
  if (t.spill || t.online > 0 ||
      std::all_of(group.begin(), group.end(), [&](int n) { return is_matmul(k.nodes[n]); }))
    return false;  // no row-wise op to write in place
  ProgramPlan p = plan;
  p.tiling[g] = t;
  p.tiling[g].in_place = true;
  Lowered<Program> twin = lower::materialize(k, dims_, target_, p);
  std::size_t groups = plan.groups.size();
  if (!twin || group_use(*twin, target_, g, groups).sbuf_bytes >=
                   group_use(plain, target_, g, groups).sbuf_bytes)
    return false;  // nothing written in place
  int d = deepest(p.tiling[g]);
  return d >= 0 && d > deepest(t);
}

std::optional<GroupTiling> CandidateSpace::onchip_steps_twin(const ir::Kernel& k,
                                                             const ProgramPlan& plan, std::size_t g,
                                                             const GroupTiling& t) const {
  if (t.spill || t.online > 0 || !reads_stepped_slice(k, plan.groups[g], dims_))
    return std::nullopt;
  ProgramPlan p = plan;
  p.tiling[g] = t;
  p.tiling[g].onchip_steps = true;
  Lowered<Program> twin = lower::materialize(k, dims_, target_, p);
  if (!twin || !reads_strided_window(*twin) || !fits(*twin, target_, g, plan.groups.size()))
    return std::nullopt;
  return p.tiling[g];
}

std::vector<GroupTiling> CandidateSpace::psum_operand_twins(const ir::Kernel& k,
                                                            const ProgramPlan& plan,
                                                            const ProgramPlan& values_plan,
                                                            std::size_t g,
                                                            const GroupTiling& t) const {
  std::vector<GroupTiling> out;
  if (t.spill || t.online > 0) return out;
  // A twin is offered where its program differs: some instruction off the Tensor engine writes
  // PSUM (psum_partials, psum_values), some matmul broadcasts a row with a constant stationary
  // (pe_broadcast).
  auto offered = [&](const GroupTiling& twin, auto&& differs, const ProgramPlan& base) {
    ProgramPlan p = base;
    p.tiling[g] = twin;
    Lowered<Program> program = lower::materialize(k, dims_, target_, p);
    if (!program || !fits(*program, target_, g, plan.groups.size())) return false;
    return std::any_of(program->insts.begin(), program->insts.end(),
                       [&](const Inst& in) { return differs(*program, in); });
  };
  auto broadcasts = [](const Program& p, const Inst& in) {
    return in.spec->op.name == "nc_matmul" && in.in.size() == 2 &&
           p.buffers[static_cast<std::size_t>(in.in[0])].constant &&
           p.buffers[static_cast<std::size_t>(in.in[0])].shape.front() == 1;
  };
  auto writes_partial = [](const Program& p, const Inst& in) {
    return in.engine != sem::Engine::Tensor && in.out >= 0 &&
           p.buffers[static_cast<std::size_t>(in.out)].memory == sem::Memory::Psum;
  };
  GroupTiling pe = t, partials = t, both = t, values = t;
  pe.pe_broadcast = true;
  partials.psum_partials = true;
  both.pe_broadcast = both.psum_partials = true;
  values.psum_values = true;
  bool has_pe = offered(pe, broadcasts, plan);
  if (has_pe) out.push_back(pe);
  if (offered(partials, writes_partial, plan)) {
    out.push_back(partials);
    if (has_pe && offered(both, writes_partial, plan)) out.push_back(both);
  }
  if (offered(values, writes_partial, plan) || offered(values, writes_partial, values_plan))
    out.push_back(values);
  // Loads copied into PSUM: a tensor_copy off the Tensor engine writes PSUM from a tile a DMA
  // loaded (a transpose of a loaded tile on the PE does not count).
  auto copies_load = [](const Program& p, const Inst& in) {
    if (in.dma || in.engine == sem::Engine::Tensor || in.spec->op.name != "tensor_copy" ||
        in.in.size() != 1 || in.out < 0 ||
        p.buffers[static_cast<std::size_t>(in.out)].memory != sem::Memory::Psum)
      return false;
    return std::any_of(p.insts.begin(), p.insts.end(),
                       [&](const Inst& w) { return w.dma && !w.store && w.out == in.in[0]; });
  };
  GroupTiling loads = values;
  loads.psum_loads = true;
  if (offered(loads, copies_load, plan) || offered(loads, copies_load, values_plan))
    out.push_back(loads);
  return out;
}

// The alternate policy moves the ops' instructions and the copies around them (PSUM
// evacuations, moves to SBUF) to their second engines: offered when either can move.
Lowered<CandidateSpace::EngineAxes> CandidateSpace::engine_axes(const SpaceSection& s,
                                                                const ir::Kernel& k,
                                                                const ProgramPlan& plan) const {
  EngineAxes axes;
  // (A kernel of views alone has no op: its one policy moves copies only.)
  axes.policies =
      s.ops.engines.empty() ? 1 : *std::max_element(s.ops.engines.begin(), s.ops.engines.end());
  Lowered<Program> program = lower::materialize(k, dims_, target_, plan);
  if (!program && axes.policies < 2) return program.no_program();
  if (program && axes.policies < 2 && copies_can_move(*program)) axes.policies = 2;
  // A third policy: the copies out of PSUM on Scalar as well (psum_copy.h).
  if (program && offers_scalar_copies(*program)) axes.policies = kScalarPsumCopies + 1;
  axes.per_op = options_.engines_per_op;
  if (axes.per_op)
    for (const auto& kept : s.ops.kept) {
      axes.op_choices.emplace_back();
      for (std::size_t l = 0; l < kept.size(); ++l)
        for (int e = 0; e < engine_options({kept[l]}, target_); ++e)
          axes.op_choices.back().emplace_back(l, e);
    }
  return axes;
}

// Stage 2, per variant and form (0 unfused, 1 fused, 2 fused with swap sites transposed): the
// section's groups and prefix -> lowerings kept (placeable, capped) -> feasible tilings ->
// instruction pairs -> engine axes. nullopt when the form adds nothing to the earlier ones, or
// has no program (the reason recorded).
std::optional<CandidateSpace::SpaceSection> CandidateSpace::section(
    int variant, int form, const OpLowerings& ops, std::vector<std::vector<int>>& unfused) {
  const ir::Kernel& k = *variants_[static_cast<std::size_t>(variant)].kernel;
  const KernelChoices& kc = *variants_[static_cast<std::size_t>(variant)].choices;
  SpaceSection s;
  s.form.variant = variant;
  s.form.fused = form > 0;
  s.ops = ops;
  Lowered<std::vector<std::vector<int>>> groups = fusion_groups(k, s.form.fused);
  if (!groups) return no_section(variant, s, groups.no_program());
  s.form.groups = std::move(*groups);
  if (!s.form.fused)
    unfused = s.form.groups;
  else if (s.form.groups == unfused)
    return std::nullopt;  // nothing to fuse: the same programs again
  if (form == 2 && !apply_swaps(s, kc)) return std::nullopt;
  auto prefix = make_prefix(k, dims_, target_, s.form.groups, s.ops.programs());
  if (!prefix) return no_section(variant, s, prefix.no_program());
  s.form.prefix = std::move(*prefix);
  ProgramPlan plan;
  plan.groups = s.form.groups;
  plan.cores = 1;
  plan.prefix = s.form.prefix.get();
  plan.transposed = s.form.transposed;
  plan.online = &kc.online;
  for (std::size_t j = 0; j < s.ops.nodes.size(); ++j)
    plan.picks[s.ops.nodes[j]] = s.ops.pick(j, 0);
  std::vector<std::vector<GroupTiling>> all;
  for (const auto& g : s.form.groups) {
    GroupExtent extent = group_extent(k, g, dims_);
    all.push_back(group_tilings(extent, options_));
    add_streamed_tilings(all.back(), k, g, extent, kc.splits);
    add_online_tilings(all.back(), k, g, extent, kc.online, dims_);
    add_chunked_tilings(all.back(), k, g, extent, kc.scans);
  }
  for (auto& a : all) plan.tiling.push_back(a.front());
  if (auto no = drop_unplaceable(s, k, plan)) return no_section(variant, s, *no);
  cap_lowerings(s);
  for (std::size_t g = 0; g < all.size(); ++g) {
    add_panel_tilings(all[g], k, s.form.groups[g], s.form.transposed, dims_);
    if (!s.ops.hoists(s.form.groups[g]))
      std::erase_if(all[g], [](const GroupTiling& t) { return t.hoist; });
    if (!reads_rhs_from_hbm(k, s.form.groups[g]))
      std::erase_if(all[g], [](const GroupTiling& t) { return t.resident; });
    if (!stores_matmul_result(k, s.form.groups[g]))
      std::erase_if(all[g], [](const GroupTiling& t) { return t.store > 0; });
  }
  double configs = 1;
  for (const auto& a : all)
    configs = s.form.fused ? configs * static_cast<double>(a.size())
                           : std::max(configs, static_cast<double>(a.size()));
  // The plan a psum-values twin is judged with: each op's first kept lowering with an
  // instruction faster with an operand in PSUM, where it has one (the working pick otherwise).
  ProgramPlan values_plan = plan;
  for (std::size_t j = 0; j < s.ops.nodes.size(); ++j)
    for (std::size_t l = 0; l < s.ops.kept[j].size(); ++l)
      if (reads_psum_faster(s.ops.kept[j][l]->program, target_.isa)) {
        values_plan.picks[s.ops.nodes[j]] = s.ops.pick(j, l);
        break;
      }
  auto tilings = feasible_tilings(k, s.form.fused, plan, values_plan, all);
  if (!tilings) return no_section(variant, s, tilings.no_program());
  s.tilings = std::move(*tilings);
  if (s.form.fused) s.pairs = instruction_pairs(s, kc);
  auto engine = engine_axes(s, k, plan);
  if (!engine) return no_section(variant, s, engine.no_program());
  s.engine = std::move(*engine);
  counts_.instruction_choices += static_cast<double>(choice_radix(s));
  counts_.tile_configs += configs * static_cast<double>(options_.bufs.size());
  s.size = choice_radix(s) * static_cast<std::int64_t>(options_.bufs.size()) *
           (s.pairs.nodes.empty() ? 1 : 2);
  s.size *= tiling_radix(s) * core_choice_count(options_.cores);
  return s;
}

// Records why variant `variant` in the form of `s` has no program: no section.
std::optional<CandidateSpace::SpaceSection> CandidateSpace::no_section(int variant,
                                                                       const SpaceSection& s,
                                                                       const NoProgram& why) {
  counts_.unsupported.push_back(
      fmt::format("variant {} ({}): {}", variant, form_name(s), why.reason));
  return std::nullopt;
}

CandidateSpace::CandidateSpace(std::vector<SpaceVariant> variants, const target::Target& target,
                               sem::DimEnv dims, const SpaceOptions& options)
    : variants_(std::move(variants)), target_(target), dims_(std::move(dims)), options_(options) {
  // Each variant whose values run on part of the partitions also in its folded layout
  // (partition_fold.h), with the same instruction choices, as one more variant after them all.
  // Likewise each variant whose inputs are read through slices stepping along their rows, with
  // those inputs viewed as row groups side by side (row_step_fold.h).
  for (std::size_t v = 0, n = variants_.size(); v < n; ++v) {
    if (auto folded = fold_partitions(*variants_[v].kernel, dims_)) {
      folded_.push_back(std::make_unique<const ir::Kernel>(std::move(*folded)));
      variants_.push_back({folded_.back().get(), variants_[v].choices});
    }
    if (auto folded = fold_row_steps(*variants_[v].kernel, dims_)) {
      folded_.push_back(std::make_unique<const ir::Kernel>(std::move(*folded)));
      variants_.push_back({folded_.back().get(), variants_[v].choices});
    }
  }
  counts_.variants = static_cast<std::int64_t>(variants_.size());
  for (std::size_t v = 0; v < variants_.size(); ++v) {
    std::optional<OpLowerings> ops = op_lowerings(static_cast<int>(v));
    if (!ops) continue;
    ++counts_.lowered_variants;
    std::vector<std::vector<int>> unfused;
    for (int form : {0, 1, 2}) {
      if (form > 0 && !options_.fusion) continue;
      if (form == 2 && variants_[v].choices->swaps.empty()) continue;
      std::optional<SpaceSection> s = section(static_cast<int>(v), form, *ops, unfused);
      if (!s) continue;
      s->first = size_;
      size_ += s->size;
      if (s->size > 0) sections_.push_back(std::move(*s));
    }
  }
  counts_.candidates = size_;
}

// The instruction-choice digits' combined radix: lowerings per op x engine policies, or per
// op its (lowering, engine) pairs.
std::int64_t CandidateSpace::choice_radix(const SpaceSection& s) {
  std::int64_t r = 1;
  if (s.engine.per_op) {  // and the policy for the copies around the ops
    for (const auto& pairs : s.engine.op_choices) r *= static_cast<std::int64_t>(pairs.size());
    return r * s.engine.policies;
  }
  for (const auto& kept : s.ops.kept) r *= static_cast<std::int64_t>(kept.size());
  return r * s.engine.policies;
}

Candidate CandidateSpace::decode(std::int64_t index) const {
  Candidate c;
  decode(index, c);
  return c;
}

// The number of the section holding candidate `index`.
std::size_t CandidateSpace::section_at(std::int64_t index) const {
  TS_CHECK(index >= 0 && index < size_, "candidate {} of {}", index, size_);
  auto it = std::upper_bound(sections_.begin(), sections_.end(), index,
                             [](std::int64_t i, const SpaceSection& s) { return i < s.first; });
  return static_cast<std::size_t>(it - 1 - sections_.begin());
}

void CandidateSpace::decode(std::int64_t index, Candidate& c) const {
  const std::size_t at = section_at(index);
  const SpaceSection& s = sections_[at];
  std::int64_t r = index - s.first;
  c.lowering.clear();
  c.op_engines.clear();
  c.tiling.clear();
  c.variant = s.form.variant;
  c.fused = s.form.fused;
  c.section = static_cast<int>(at);
  auto digit = [&](std::size_t radix) {
    auto d = static_cast<int>(r % static_cast<std::int64_t>(radix));
    r /= static_cast<std::int64_t>(radix);
    return d;
  };
  // Innermost the digits that leave the program's structure alone (engines, buffering depth),
  // so that neighbouring candidates are one program rebound (CandidateCursor).
  c.engines = digit(static_cast<std::size_t>(s.engine.policies));  // per op: the copies' policy
  c.bufs = options_.bufs[digit(options_.bufs.size())];
  c.cores = core_choice(options_.cores,
                        digit(static_cast<std::size_t>(core_choice_count(options_.cores))));
  if (s.engine.per_op) {
    for (const auto& pairs : s.engine.op_choices) {
      auto [l, e] = pairs[static_cast<std::size_t>(digit(pairs.size()))];
      c.lowering.push_back(l);
      c.op_engines.push_back(e);
    }
  } else {
    for (const auto& l : s.ops.kept) c.lowering.push_back(digit(l.size()));
  }
  c.instruction_fusion = !s.pairs.nodes.empty() && digit(2) == 1;
  if (s.form.fused) {
    for (const auto& t : s.tilings) c.tiling.push_back(t[digit(t.size())]);
  } else {
    // Unfused loop nests do not interact: one tiling policy scales over every nest's options.
    auto radix = static_cast<std::size_t>(tiling_radix(s));
    std::size_t d = static_cast<std::size_t>(digit(radix));
    for (const auto& t : s.tilings) c.tiling.push_back(t[d * t.size() / radix]);
  }
  for (auto& t : c.tiling) t.bufs = c.bufs;
}

// The radices of a section's digits, innermost first, in decode()'s order.
std::vector<std::int64_t> CandidateSpace::digit_radices(const SpaceSection& s) const {
  std::vector<std::int64_t> r = {s.engine.policies, static_cast<std::int64_t>(options_.bufs.size()),
                                 core_choice_count(options_.cores)};
  if (s.engine.per_op)
    for (const auto& pairs : s.engine.op_choices)
      r.push_back(static_cast<std::int64_t>(pairs.size()));
  else
    for (const auto& l : s.ops.kept) r.push_back(static_cast<std::int64_t>(l.size()));
  if (!s.pairs.nodes.empty()) r.push_back(2);
  if (s.form.fused)
    for (const auto& t : s.tilings) r.push_back(static_cast<std::int64_t>(t.size()));
  else
    r.push_back(tiling_radix(s));
  return r;
}

std::vector<std::int64_t> CandidateSpace::neighbours(std::int64_t index) const {
  const std::size_t at = section_at(index);
  const SpaceSection& s = sections_[at];
  std::vector<std::int64_t> out;
  std::int64_t r = index - s.first, weight = 1;
  for (std::int64_t radix : digit_radices(s)) {
    const std::int64_t d = r % radix;
    r /= radix;
    for (std::int64_t v = 0; v < radix; ++v)
      if (v != d) out.push_back(index + (v - d) * weight);
    weight *= radix;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string CandidateSpace::describe(std::int64_t index) const {
  Candidate c = decode(index);
  const SpaceSection& s = sections_[c.section];
  std::string text =
      fmt::format("v{} {} engines={} bufs={}", c.variant, form_name(s),
                  s.engine.per_op ? (c.engines ? "per-op+alternate-copies" : "per-op")
                  : c.engines == kScalarPsumCopies ? "alternate+scalar-psum-copies"
                  : c.engines                      ? "alternate"
                                                   : "default",
                  c.bufs);
  if (c.cores > 1) text += fmt::format(" cores={}", c.cores);
  // Per op: its lowering, marked when it runs on its instructions' second engines.
  auto alternate = [&](std::size_t j) {
    return s.engine.per_op && c.op_engines[j] == 1 ? " (alternate engines)" : "";
  };
  if (c.instruction_fusion) text += " instruction-fusion";
  for (std::size_t j = 0; j < s.ops.nodes.size(); ++j) {
    bool absorbed = false;
    for (std::size_t q = 0; q < s.pairs.nodes.size() && c.instruction_fusion; ++q) {
      const auto& in = s.pairs.absorbed[q];
      if (std::count(in.begin(), in.end(), s.ops.nodes[j])) absorbed = true;
      if (s.pairs.nodes[q].second == s.ops.nodes[j]) {
        text +=
            fmt::format(" | {}: {}{}", s.pairs.labels[q], s.pairs.lowering[q]->text, alternate(j));
        absorbed = true;
      }
    }
    const Lowering* low = s.ops.kept[j][c.lowering[j]];
    if (!absorbed)
      text += fmt::format(" | {}: {}{}{}", s.ops.labels[j], low->text,
                          s.ops.stationary.count(low) ? " (stationary load)" : "", alternate(j));
  }
  for (std::size_t g = 0; g < c.tiling.size(); ++g) {
    const auto& t = c.tiling[g];
    text += fmt::format(
        " | g{}: pt={} block={} free={}{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}", g, t.pt, t.block, t.free,
        t.store > 0 ? fmt::format(" store={}", t.store) : "", t.hoist ? " hoist" : "",
        t.resident ? " resident" : "", t.panel ? " panel" : "", t.spill ? " spill" : "",
        t.in_place ? " inplace" : "", t.pipeline ? " pipe" : "", t.onchip_steps ? " steps" : "",
        t.pe_broadcast ? " pe-broadcast" : "", t.psum_partials ? " psum-partials" : "",
        t.psum_values ? " psum-values" : "", t.psum_loads ? " psum-loads" : "",
        streamed(*variants_[c.variant].kernel, s.form.groups[g], t) ? " stream" : "",
        t.online > 0 ? fmt::format(" online={}", t.online) : "",
        t.free > 0 && group_extent(*variants_[c.variant].kernel, s.form.groups[g], dims_).chunkable
            ? " chunks"
            : "");
  }
  return text;
}

ProgramPlan CandidateSpace::plan(const Candidate& c) const {
  ProgramPlan p;
  plan(c, p);
  return p;
}

void CandidateSpace::plan(const Candidate& c, ProgramPlan& plan) const {
  const SpaceSection& s = sections_.at(static_cast<std::size_t>(c.section));
  if (plan.prefix != s.form.prefix.get()) {  // another section's ops and loop nests
    plan.picks.clear();
    plan.groups = s.form.groups;
    plan.transposed = s.form.transposed;
    plan.prefix = s.form.prefix.get();
  }
  plan.absorbed.clear();
  plan.fused_operands.clear();
  plan.tiling = c.tiling;
  plan.online = &variants_.at(static_cast<std::size_t>(c.variant)).choices->online;
  plan.cores = c.cores;
  plan.legality = &target_.legality;
  plan.target = &target_;
  // Per op: its instructions' engine and its copies' (the policy); both the policy without per-op
  // digits.
  auto engine = [&](std::size_t j) { return c.op_engines.empty() ? c.engines : c.op_engines[j]; };
  for (std::size_t j = 0; j < s.ops.nodes.size(); ++j)
    plan.picks[s.ops.nodes[j]] =
        s.ops.pick(j, static_cast<std::size_t>(c.lowering[j]), engine(j), c.engines);
  for (std::size_t q = 0; q < s.pairs.nodes.size() && c.instruction_fusion; ++q) {
    for (int n : s.pairs.absorbed[q]) plan.absorbed[n] = s.pairs.nodes[q].second;
    if (!s.pairs.operands[q].empty())
      plan.fused_operands[s.pairs.nodes[q].second] = s.pairs.operands[q];
    auto j = static_cast<std::size_t>(
        std::find(s.ops.nodes.begin(), s.ops.nodes.end(), s.pairs.nodes[q].second) -
        s.ops.nodes.begin());
    const ir::Kernel* own = plan.picks[s.pairs.nodes[q].second].lowering;
    plan.picks[s.pairs.nodes[q].second] = {
        &s.pairs.lowering[q]->program, j < s.ops.nodes.size() ? engine(j) : c.engines, c.engines};
    plan.picks[s.pairs.nodes[q].second].combine = own;  // a streamed nest's fold
  }
}

Lowered<Program> CandidateSpace::materialize(const Candidate& c) const {
  return materialize(c, plan(c));
}

Lowered<Program> CandidateSpace::materialize(const Candidate& c, const ProgramPlan& plan) const {
  Lowered<Program> p = lower::materialize(*variants_.at(static_cast<std::size_t>(c.variant)).kernel,
                                          dims_, target_, plan);
  if (p && p->cores > 1)
    if (auto why = core_split_conflict(*p)) {
      if (core_reduced(*p).empty()) return NoProgram{"not split over cores: " + *why};
      return with_core_reduction(*p, p->cores, target_);
    }
  return p;
}

Lowered<Program> CandidateSpace::materialize(std::int64_t index) const {
  return materialize(decode(index));
}

std::optional<Program> CandidateSpace::heuristic() const {
  for (const auto& s : sections_) {
    if (s.form.variant != 0 || s.form.fused) continue;
    Candidate c;
    c.variant = s.form.variant;
    c.section = static_cast<int>(&s - sections_.data());
    c.lowering.assign(s.ops.nodes.size(), 0);
    // A compiler's cheapest lowering reads the operands as the kernel writes them.
    for (std::size_t j = 0; j < s.ops.kept.size(); ++j)
      while (c.lowering[j] + 1 < static_cast<int>(s.ops.kept[j].size()) &&
             s.ops.stationary.count(s.ops.kept[j][static_cast<std::size_t>(c.lowering[j])]))
        ++c.lowering[j];
    const ir::Kernel& k = *variants_[0].kernel;
    for (const auto& g : s.form.groups) {
      GroupExtent e = group_extent(k, g, dims_);
      std::int64_t free = e.has_matmul || e.elementwise
                              ? largest_divisor(e.has_matmul ? e.matmul_n.front() : e.cols, 512)
                              : 0;
      c.tiling.push_back({largest_divisor(e.rows, 128), 1, free, 2});
    }
    Lowered<Program> lowered = materialize(c);
    if (!lowered) return std::nullopt;
    lowered->config =
        "heuristic: original kernel, unfused, cheapest lowering, default engines, 128 x 512 tiles, "
        "block 1, bufs 2";
    return std::move(*lowered);
  }
  return std::nullopt;
}

std::vector<CandidateSpace::Section> CandidateSpace::sections() const {
  std::vector<Section> out;
  for (const auto& s : sections_)
    out.push_back({s.form.variant, s.form.fused, s.first, s.size, s.form.swapped});
  return out;
}

const ir::Kernel& CandidateSpace::variant_kernel(int v) const {
  return *variants_.at(static_cast<std::size_t>(v)).kernel;
}

}  // namespace ts::lower

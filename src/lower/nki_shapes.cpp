#include "tilesweep/lower/nki_shapes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "tilesweep/base/error.h"

namespace ts::lower {

namespace {

bool same_window(const Window& a, const Window& b) {
  return a.terms == b.terms && a.width == b.width && a.offset == b.offset && a.step == b.step &&
         a.repeat == b.repeat;
}

bool same_access(const Access& a, const Access& b) {
  return a.buffer == b.buffer && a.extent == b.extent && a.terms == b.terms &&
         a.tile_dim == b.tile_dim && a.offset == b.offset && a.stride == b.stride &&
         a.repeat == b.repeat && a.base == b.base;
}

bool same_inst(const Inst& a, const Inst& b) {
  if (a.spec != b.spec || a.engine != b.engine || a.in != b.in || a.out != b.out ||
      a.dma != b.dma || a.store != b.store || a.accumulate_block != b.accumulate_block ||
      a.repeat != b.repeat || a.attrs != b.attrs || !same_window(a.out_window, b.out_window) ||
      a.in_window.size() != b.in_window.size())
    return false;
  for (std::size_t j = 0; j < a.in_window.size(); ++j)
    if (!same_window(a.in_window[j], b.in_window[j])) return false;
  return !a.dma || same_access(a.hbm, b.hbm);
}

// "" when `b` differs from `a` only in loop trip counts and HBM tensor sizes, else what differs.
std::string structure_difference(const Program& a, const Program& b) {
  if (a.blocks.size() != b.blocks.size() || a.insts.size() != b.insts.size() ||
      a.buffers.size() != b.buffers.size() || a.cores != b.cores)
    return "the loop nest changes";
  for (std::size_t i = 0; i < a.blocks.size(); ++i) {
    const Block &x = a.blocks[i], &y = b.blocks[i];
    if (x.parent != y.parent || x.items.size() != y.items.size()) return "the loop nest changes";
    for (std::size_t j = 0; j < x.items.size(); ++j)
      if (x.items[j].inst != y.items[j].inst || x.items[j].block != y.items[j].block)
        return "the loop nest changes";
  }
  for (std::size_t i = 0; i < a.insts.size(); ++i)
    if (!same_inst(a.insts[i], b.insts[i]))
      return fmt::format("instruction {} ({}) changes", i, a.insts[i].spec->op.name);
  for (std::size_t i = 0; i < a.buffers.size(); ++i) {
    const Buffer &x = a.buffers[i], &y = b.buffers[i];
    bool hbm = x.memory == sem::Memory::Hbm;
    if (x.memory != y.memory || x.dtype != y.dtype || x.param != y.param || x.output != y.output ||
        x.alias != y.alias || x.shape.size() != y.shape.size() ||
        (!hbm && (x.shape != y.shape || x.bufs != y.bufs)))
      return fmt::format("the tile '{}' changes", x.name);
  }
  return "";
}

// A size v at the base that is v * D1 / D0 in the probe of D (D0 -> D1): its dims and the
// rational factor, as a Python expression of the dims' names.
struct Proportional {
  bool ok = true;
  std::vector<int> dims;  // probe indices it scales with
  std::int64_t num = 1, den = 1;
};

Proportional proportional(std::int64_t v, const std::vector<std::int64_t>& at_probe,
                          const std::vector<ShapeProbe>& probes,
                          const std::vector<std::int64_t>& base) {
  Proportional r;
  r.num = v;
  for (std::size_t j = 0; j < probes.size(); ++j) {
    if (at_probe[j] == v) continue;
    if (v * probes[j].value != at_probe[j] * base[j]) r.ok = false;
    r.dims.push_back(static_cast<int>(j));
    r.den *= base[j];
  }
  std::int64_t g = std::gcd(r.num, r.den);
  if (g > 1) r.num /= g, r.den /= g;
  return r;
}

class GenericShapes {
 public:
  GenericShapes(const Program& p, const sem::DimEnv& dims, std::vector<ShapeProbe> probes,
                const std::vector<std::string>& param_names)
      : p_(p), dims_(dims), probes_(std::move(probes)), params_(param_names) {}

  NkiShapes run();

 private:
  std::string expr(const Proportional& q) const;
  bool drop_non_proportional();
  void name_dims();
  void build();

  const Program& p_;
  const sem::DimEnv& dims_;
  std::vector<ShapeProbe> probes_;
  const std::vector<std::string>& params_;
  std::vector<std::int64_t> base_;
  std::vector<std::string> name_;
  NkiShapes out_;
};

std::string GenericShapes::expr(const Proportional& q) const {
  std::vector<std::string> parts;
  for (int j : q.dims) parts.push_back(name_[j]);
  if (q.num != 1 || parts.empty()) parts.push_back(std::to_string(q.num));
  std::string e = fmt::format("{}", fmt::join(parts, " * "));
  return q.den == 1 ? e : fmt::format("{} // {}", e, q.den);
}

// Drops the probes (dims) some size does not scale with in proportion; true when one was dropped.
bool GenericShapes::drop_non_proportional() {
  std::set<int> bad;
  auto check = [&](std::int64_t v, const std::vector<std::int64_t>& at) {
    for (std::size_t j = 0; j < probes_.size(); ++j)
      if (at[j] != v && v * probes_[j].value != at[j] * base_[j]) bad.insert(static_cast<int>(j));
  };
  std::vector<std::int64_t> at(probes_.size());
  for (std::size_t b = 0; b < p_.blocks.size(); ++b) {
    for (std::size_t j = 0; j < probes_.size(); ++j) at[j] = probes_[j].program.blocks[b].trips;
    check(p_.blocks[b].trips, at);
  }
  for (std::size_t b = 0; b < p_.buffers.size(); ++b)
    for (std::size_t d = 0;
         d < p_.buffers[b].shape.size() && p_.buffers[b].memory == sem::Memory::Hbm; ++d) {
      for (std::size_t j = 0; j < probes_.size(); ++j)
        at[j] = probes_[j].program.buffers[b].shape[d];
      check(p_.buffers[b].shape[d], at);
    }
  for (auto it = bad.rbegin(); it != bad.rend(); ++it) {
    out_.fixed.push_back(probes_[*it].dim + ": a size does not scale with it in proportion");
    probes_.erase(probes_.begin() + *it);
    base_.erase(base_.begin() + *it);
  }
  return !bad.empty();
}

NkiShapes GenericShapes::run() {
  for (auto it = probes_.begin(); it != probes_.end();) {
    std::string why = structure_difference(p_, it->program);
    if (!why.empty()) {
      out_.fixed.push_back(it->dim + ": at another size " + why);
      it = probes_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& pr : probes_) base_.push_back(dims_.at(pr.dim));
  while (drop_non_proportional()) {
  }
  name_dims();
  build();
  return out_;
}

// Each generic dim is read from the first tensor argument with a dim of exactly its size; a dim
// no argument carries alone is fixed.
void GenericShapes::name_dims() {
  std::set<std::string> used(params_.begin(), params_.end());
  for (std::size_t j = 0; j < probes_.size();) {
    std::string source;
    for (std::size_t b = 0; b < p_.buffers.size() && source.empty(); ++b) {
      const Buffer& buf = p_.buffers[b];
      if (buf.param < 0 || buf.alias >= 0) continue;
      for (std::size_t d = 0; d < buf.shape.size() && source.empty(); ++d) {
        std::vector<std::int64_t> at;
        for (const auto& pr : probes_) at.push_back(pr.program.buffers[b].shape[d]);
        Proportional q = proportional(buf.shape[d], at, probes_, base_);
        if (q.ok && q.dims == std::vector<int>{static_cast<int>(j)} && q.num == 1 && q.den == 1)
          source = fmt::format("{}.shape[{}]", params_.at(static_cast<std::size_t>(buf.param)), d);
      }
    }
    if (source.empty()) {
      out_.fixed.push_back(probes_[j].dim + ": no tensor argument has a dim of exactly this size");
      probes_.erase(probes_.begin() + static_cast<std::ptrdiff_t>(j));
      base_.erase(base_.begin() + static_cast<std::ptrdiff_t>(j));
      continue;
    }
    std::string name = probes_[j].dim;
    while (used.count(name)) name += "_";
    used.insert(name);
    name_.push_back(name);
    out_.defs.emplace_back(name, source);
    out_.generic.push_back(probes_[j].dim);
    ++j;
  }
}

// The expressions of every varying size, and the conditions they need: an integer (a multiple)
// and, for a trip count, at least one; a loop that may end on a partial tile (partial_loops)
// runs ceil(dim / tile) times instead and needs no multiple.
void GenericShapes::build() {
  std::set<std::string> conditions;
  std::set<int> divided;  // generic dims some size needs a multiple of
  auto size = [&](const Proportional& q, bool trip) -> std::string {
    if (q.dims.empty()) return "";
    std::string e = expr(q);
    if (q.den != 1) {
      Proportional whole = q;
      whole.den = 1;
      conditions.insert(fmt::format("{} % {} == 0", expr(whole), q.den));
      for (int j : q.dims) {  // each a multiple: what takes_shape can check (enough, if more)
        divided.insert(j);
        std::int64_t& m = out_.multiple[probes_[j].dim];
        m = std::lcm(std::max<std::int64_t>(m, 1), q.den);
      }
    }
    if (trip) conditions.insert(fmt::format("{} >= 1", e));
    return e;
  };
  auto scaled = [&](std::int64_t v, const std::vector<std::int64_t>& at) {
    Proportional q = proportional(v, at, probes_, base_);
    TS_CHECK(q.ok,
             "size {} does not scale in proportion after the non-proportional dims were dropped",
             v);
    return q;
  };
  std::vector<std::int64_t> at(probes_.size());
  for (std::size_t b = 0; b < p_.buffers.size(); ++b) {
    const Buffer& buf = p_.buffers[b];
    if (buf.memory != sem::Memory::Hbm) continue;
    std::vector<std::string> exprs;
    bool any = false;
    for (std::size_t d = 0; d < buf.shape.size(); ++d) {
      for (std::size_t j = 0; j < probes_.size(); ++j)
        at[j] = probes_[j].program.buffers[b].shape[d];
      exprs.push_back(size(scaled(buf.shape[d], at), false));
      any = any || !exprs.back().empty();
    }
    if (any) out_.hbm_shape[static_cast<int>(b)] = exprs;
  }
  std::map<int, Proportional> trips;
  std::map<int, PartialLoop> candidates;
  for (std::size_t b = 1; b < p_.blocks.size(); ++b) {
    for (std::size_t j = 0; j < probes_.size(); ++j) at[j] = probes_[j].program.blocks[b].trips;
    Proportional q = scaled(p_.blocks[b].trips, at);
    if (q.dims.size() == 1 && q.num == 1 && q.den > 1)
      candidates[static_cast<int>(b)] = {name_[q.dims[0]], q.den};
    trips[static_cast<int>(b)] = q;
  }
  out_.partial = partial_loops(p_, candidates, out_.hbm_shape);
  for (const auto& [b, q] : trips) {
    auto cut = out_.partial.find(b);
    if (cut == out_.partial.end()) {
      if (std::string e = size(q, true); !e.empty()) out_.trips[b] = e;
      continue;
    }
    out_.trips[b] =
        fmt::format("({} + {}) // {}", cut->second.dim, cut->second.tile - 1, cut->second.tile);
    conditions.insert(fmt::format("{} >= 1", cut->second.dim));
  }
  std::set<std::string> partial;
  for (const auto& [b, loop] : out_.partial) partial.insert(loop.dim);
  for (std::size_t j = 0; j < name_.size(); ++j) {
    if (partial.count(name_[j]) && !divided.count(static_cast<int>(j)))
      out_.partial_dims.push_back(name_[j]);
    out_.multiple.emplace(probes_[j].dim, 1);
  }
  out_.asserts.assign(conditions.begin(), conditions.end());
}

}  // namespace

NkiShapes generic_shapes(const Program& p, const sem::DimEnv& dims,
                         const std::vector<ShapeProbe>& probes,
                         const std::vector<std::string>& param_names) {
  return GenericShapes(p, dims, probes, param_names).run();
}

bool takes_shape(const NkiShapes& shapes, const sem::DimEnv& built, const sem::DimEnv& asked,
                 std::string* why) {
  for (const auto& [dim, value] : built) {
    auto a = asked.find(dim);
    auto m = shapes.multiple.find(dim);
    if (a == asked.end()) {
      *why = fmt::format("no {} given", dim);
    } else if (m == shapes.multiple.end() && a->second != value) {
      *why = fmt::format("{} is fixed at {} in it", dim, value);
    } else if (m != shapes.multiple.end() && (a->second < 1 || a->second % m->second != 0)) {
      *why = fmt::format("its {} must be a multiple of {}", dim, m->second);
    } else {
      continue;
    }
    return false;
  }
  if (asked.size() != built.size()) {
    *why = "the asked shape has other dims";
    return false;
  }
  return true;
}

std::optional<Program> rebuild(const CandidateSpace& from, const Candidate& recorded,
                               const CandidateSpace& to, std::string* why) {
  Candidate c = recorded;
  const auto section = from.sections().at(static_cast<std::size_t>(c.section));
  auto there = to.sections();
  auto it = std::find_if(there.begin(), there.end(), [&](const CandidateSpace::Section& s) {
    return s.variant == section.variant && s.fused == section.fused && s.swapped == section.swapped;
  });
  if (it == there.end()) {
    *why = "its variant and fusion form have no program there";
    return std::nullopt;
  }
  c.section = static_cast<int>(it - there.begin());
  Lowered<Program> p = to.materialize(c);
  if (!p) {
    *why = p.no_program().reason;
    return std::nullopt;
  }
  Program here = from.materialize(recorded).value();
  bool same = here.insts.size() == p->insts.size();
  for (std::size_t i = 0; same && i < here.insts.size(); ++i)
    same = here.insts[i].spec == p->insts[i].spec;
  if (!same) {
    *why = "other instructions are picked there";
    return std::nullopt;
  }
  return std::move(*p);
}

std::optional<Program> rebuild(const CandidateSpace& from, std::int64_t index,
                               const CandidateSpace& to, std::string* why) {
  return rebuild(from, from.decode(index), to, why);
}

std::vector<ShapeProbe> shape_probes(const CandidateSpace& space, const Candidate& c,
                                     const std::vector<ProbeSpace>& at,
                                     std::vector<std::string>* fixed) {
  std::vector<ShapeProbe> out;
  for (const ProbeSpace& ps : at) {
    std::string why = ps.why;
    std::optional<Program> p;
    if (ps.space) {
      try {
        p = rebuild(space, c, *ps.space, &why);
      } catch (const Unsupported& e) {
        why = e.what();
      }
    }
    if (p)
      out.push_back({ps.dim, ps.value, std::move(*p)});
    else
      fixed->push_back(fmt::format("{}: at {} = {} {}", ps.dim, ps.dim, ps.value, why));
  }
  return out;
}

std::vector<ShapeProbe> shape_probes(const CandidateSpace& space, std::int64_t index,
                                     const std::vector<ProbeSpace>& at,
                                     std::vector<std::string>* fixed) {
  return shape_probes(space, space.decode(index), at, fixed);
}

std::vector<ProbeSpace> probe_spaces(const std::vector<SpaceVariant>& variants,
                                     const target::Target& t, const sem::DimEnv& dims,
                                     const SpaceOptions& options) {
  std::vector<ProbeSpace> out;
  for (const auto& [dim, value] : dims) {
    ProbeSpace& ps = out.emplace_back();
    ps.dim = dim, ps.value = 2 * value;
    sem::DimEnv at = dims;
    at[dim] = ps.value;
    try {
      ps.space.emplace(variants, t, at, options);
    } catch (const std::exception& e) {
      ps.why = e.what();
    }
  }
  return out;
}

NkiShapes generic_form(const CandidateSpace& space, const Candidate& c, const Program& p,
                       const sem::DimEnv& dims, const std::vector<ProbeSpace>& at,
                       const std::vector<std::string>& param_names) {
  std::vector<std::string> fixed;
  std::vector<ShapeProbe> probes = shape_probes(space, c, at, &fixed);
  NkiShapes shapes = generic_shapes(p, dims, probes, param_names);
  shapes.fixed.insert(shapes.fixed.begin(), fixed.begin(), fixed.end());
  return shapes;
}

}  // namespace ts::lower

// Reduction fusion (reduction_fusion.h): each reducing instruction matched with the element-wise
// instruction whose result it reads, and the target's fused instruction checked on that pair.
#include "tilesweep/lower/reduction_fusion.h"

#include <algorithm>
#include <optional>
#include <string>

#include "tilesweep/lower/legal_engine.h"

namespace ts::lower {

namespace {

const char* reducer_name(sem::Reducer r) {
  switch (r) {
    case sem::Reducer::Sum:
      return "add";
    case sem::Reducer::Prod:
      return "mul";
    case sem::Reducer::Max:
      return "max";
    case sem::Reducer::Min:
      return "min";
  }
  return "";
}

bool same_window(const Window& a, const Window& b) {
  return a.terms == b.terms && a.width == b.width && a.offset == b.offset && a.step == b.step &&
         a.repeat == b.repeat;
}

bool allows(const std::vector<sem::Memory>& allowed, sem::Memory m) {
  return allowed.empty() || std::find(allowed.begin(), allowed.end(), m) != allowed.end();
}

bool has(const SmallVector<int, 3>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Calls f on every instruction of `item` (a nested loop's, all of them).
template <typename F>
void each_inst(const Program& p, const Item& item, F&& f) {
  if (item.inst >= 0) {
    f(p.insts[static_cast<std::size_t>(item.inst)]);
    return;
  }
  for (const Item& inner : p.blocks[static_cast<std::size_t>(item.block)].items)
    each_inst(p, inner, f);
}

// The attributes fused instruction `f` takes from element-wise instruction `a`, its reducer
// attribute set to `reducer`; nullopt where a value is not one of f's choices, or an attribute
// of a that f lacks is not at a's default.
std::optional<sem::AttrMap> fused_attrs(const sem::InstrSpec& f, const Inst& a,
                                        const std::string& reducer) {
  if (f.reducer({}) != reducer && f.reduce_attr.empty()) return std::nullopt;
  sem::AttrMap out;
  for (const auto& spec : f.op.attrs) {
    sem::AttrValue value;
    if (spec.name == f.reduce_attr) {
      value = reducer;
    } else if (auto it = a.attrs.find(spec.name); it != a.attrs.end()) {
      value = it->second;
    } else if (const sem::AttrSpec* own = a.spec->op.attr(spec.name); own && own->default_value) {
      value = *own->default_value;
    } else {
      return std::nullopt;
    }
    if (const auto* s = std::get_if<std::string>(&value);
        s && !spec.choices.empty() &&
        std::find(spec.choices.begin(), spec.choices.end(), *s) == spec.choices.end())
      return std::nullopt;
    out[spec.name] = std::move(value);
  }
  for (const auto& [name, value] : a.attrs) {
    if (f.op.attr(name)) continue;
    const sem::AttrSpec* own = a.spec->op.attr(name);
    if (!own || !own->default_value || !(*own->default_value == value)) return std::nullopt;
  }
  return out;
}

// The size of operand `j` of `in` as the instruction sees it ([rows, window width]).
std::vector<std::int64_t> operand_shape(const Program& p, const Inst& in, std::size_t j) {
  std::vector<std::int64_t> s = p.buffers[static_cast<std::size_t>(in.in[j])].shape;
  if (j < in.in_window.size() && !in.in_window[j].whole() && !s.empty())
    s.back() = in.in_window[j].width;
  return s;
}

// True when fused instruction `f` takes a's operands (memories, limits) and r's output memory.
bool takes(const Program& p, const sem::InstrSpec& f, const Inst& a, const Inst& r) {
  if (f.operand_memory.size() < a.in.size()) return false;
  for (std::size_t j = 0; j < a.in.size(); ++j) {
    if (!allows(f.operand_memory[j], p.buffers[static_cast<std::size_t>(a.in[j])].memory))
      return false;
    std::vector<std::int64_t> s = operand_shape(p, a, j);
    if (j < f.operand_limits.size() && f.operand_limits[j].size() == s.size())
      for (std::size_t d = 0; d < s.size(); ++d)
        if (f.operand_limits[j][d] > 0 && s[d] > f.operand_limits[j][d]) return false;
  }
  return allows(f.out_memory, p.buffers[static_cast<std::size_t>(r.out)].memory);
}

// The instruction of `t` that runs a and r as one, with its attributes; nullopt where none does.
std::optional<std::pair<const sem::InstrSpec*, sem::AttrMap>> fused_form(const Program& p,
                                                                         const target::Target& t,
                                                                         const Inst& a,
                                                                         const Inst& r) {
  const std::string reducer = reducer_name(*r.reduces);
  for (const sem::InstrSpec* f : t.isa.reducing_forms(a.spec->op.name)) {
    if (std::find(f->engines.begin(), f->engines.end(), a.engine) == f->engines.end()) continue;
    std::optional<sem::AttrMap> attrs = fused_attrs(*f, a, reducer);
    if (!attrs || !takes(p, *f, a, r)) continue;
    Inst fi = a;
    fi.spec = f;
    fi.attrs = *attrs;
    fi.out = r.out;
    fi.out_window = r.out_window;
    if (breach_on(p, fi, a.engine, t.legality)) continue;
    return std::pair{f, std::move(*attrs)};
  }
  return std::nullopt;
}

bool can_ride(const Inst& r) {
  return r.reduces && !r.dma && !r.in.empty() && r.out >= 0 && r.lag(0) == 0 &&
         r.accumulate_block < 0 && r.repeat <= 1 && !has(r.in, r.out) &&
         (r.in_window.empty() || r.in_window[0].repeat == 1);
}

bool can_carry(const Inst& a, const Inst& r) {
  return !a.dma && a.out >= 0 && a.rides < 0 && a.accumulate_block < 0 && a.repeat <= 1 &&
         a.moving_attr.empty() && a.spec->op.contract.empty() && !has(a.in, r.out) &&
         same_window(a.out_window, r.in_window.empty() ? Window{} : r.in_window[0]);
}

// The position in `items` of the instruction rider items[at] may ride on, or -1: the last item
// before it writing its operand 0, when that is an instruction and nothing in between writes
// either's operands or r's output, or reads r's output.
int carrier(const Program& p, const std::vector<Item>& items, std::size_t at) {
  const Inst& r = p.insts[static_cast<std::size_t>(items[at].inst)];
  const int e = r.in[0];
  for (std::size_t k = at; k-- > 0;) {
    bool writes_e = false;
    each_inst(p, items[k], [&](const Inst& in) { writes_e = writes_e || in.out == e; });
    if (!writes_e) continue;
    if (items[k].inst < 0) return -1;
    const Inst& a = p.insts[static_cast<std::size_t>(items[k].inst)];
    bool clash = false;
    for (std::size_t m = k + 1; m < at && !clash; ++m)
      each_inst(p, items[m], [&](const Inst& in) {
        clash = clash || has(in.in, r.out) ||
                (in.out >= 0 && (in.out == r.out || has(a.in, in.out) || has(r.in, in.out)));
      });
    return clash ? -1 : static_cast<int>(k);
  }
  return -1;
}

}  // namespace

void fuse_reductions(Program& p, const target::Target& t) {
  bool any = false;
  for (Inst& in : p.insts) {
    in.rides = -1;
    in.fused = nullptr;
    any = any || in.reduces.has_value();
  }
  if (!any) return;
  std::vector<char> carries(p.insts.size(), 0);
  for (const Block& b : p.blocks)
    for (std::size_t at = 0; at < b.items.size(); ++at) {
      if (b.items[at].inst < 0) continue;
      Inst& r = p.insts[static_cast<std::size_t>(b.items[at].inst)];
      if (!can_ride(r)) continue;
      int k = carrier(p, b.items, at);
      if (k < 0) continue;
      int ai = b.items[static_cast<std::size_t>(k)].inst;
      const Inst& a = p.insts[static_cast<std::size_t>(ai)];
      if (carries[static_cast<std::size_t>(ai)] || !can_carry(a, r)) continue;
      auto form = fused_form(p, t, a, r);
      if (!form) continue;
      r.rides = ai;
      r.fused = form->first;
      carries[static_cast<std::size_t>(ai)] = 1;
    }
}

Inst fused_instruction(const Program& p, int r) {
  const Inst& rider = p.insts[static_cast<std::size_t>(r)];
  const Inst& a = p.insts[static_cast<std::size_t>(rider.rides)];
  Inst f = a;
  f.spec = rider.fused;
  f.attrs = fused_attrs(*rider.fused, a, reducer_name(*rider.reduces)).value();
  f.out = rider.out;
  f.out_window = rider.out_window;
  f.reduces.reset();
  f.scalar_bias = -1;
  if (!rider.note.empty()) f.note = a.note.empty() ? rider.note : a.note + "; " + rider.note;
  return f;
}

int riders(const Program& p) {
  return static_cast<int>(
      std::count_if(p.insts.begin(), p.insts.end(), [](const Inst& in) { return in.rides >= 0; }));
}

}  // namespace ts::lower

#include "tilesweep/semantics/instr_spec.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "spec_parse.h"
#include "tilesweep/base/hash.h"
#include "tilesweep/base/suggest.h"

namespace ts::sem {

namespace {

// The file's [nki] table: NKI spellings of op / function names and of engines.
struct NkiNames {
  std::map<std::string, std::string> names, engines, current_engines;
};

Engine parse_engine(const std::string& s, const SourceLoc& loc) {
  static const std::pair<const char*, Engine> names[] = {{"tensor", Engine::Tensor},
                                                         {"vector", Engine::Vector},
                                                         {"scalar", Engine::Scalar},
                                                         {"gpsimd", Engine::GpSimd},
                                                         {"dma", Engine::Dma}};
  for (auto& [n, e] : names)
    if (s == n) return e;
  fail(loc, "unknown engine '{}' (expected tensor, vector, scalar, gpsimd or dma)", s);
}

Memory parse_memory(const std::string& s, const SourceLoc& loc) {
  if (s == "sbuf") return Memory::Sbuf;
  if (s == "psum") return Memory::Psum;
  if (s == "hbm") return Memory::Hbm;
  fail(loc, "unknown memory '{}' (expected sbuf, psum or hbm)", s);
}

std::vector<std::string> strings(const toml::node& n, const std::string& file, const char* what) {
  std::vector<std::string> out;
  const toml::array* a = n.as_array();
  if (!a) fail(toml_loc(n, file), "{} must be an array of strings", what);
  for (const auto& v : *a) {
    if (!v.is_string()) fail(toml_loc(v, file), "{} must be an array of strings", what);
    out.push_back(v.as_string()->get());
  }
  return out;
}

bool pattern_has_dim(const OpSpec& op, const std::string& dim) {
  auto in = [&](const Pattern& p) {
    for (const auto& it : p.items)
      if (!it.group && it.name == dim) return true;
    return false;
  };
  for (const auto& p : op.shapes)
    if (in(p)) return true;
  return in(op.out);
}

// The dims named in `op`'s operand and output patterns, in order of first appearance.
std::vector<std::string> pattern_dims(const OpSpec& op) {
  std::vector<std::string> out;
  auto add = [&](const Pattern& p) {
    for (const auto& it : p.items)
      if (!it.group && !it.name.empty() && std::find(out.begin(), out.end(), it.name) == out.end())
        out.push_back(it.name);
  };
  for (const auto& p : op.shapes) add(p);
  add(op.out);
  return out;
}

// "; did you mean 'x'?" when `name` is close to one of `known`, else " (expected a, b or c)".
std::string suggestion(const std::string& name, const std::vector<std::string>& known) {
  if (std::string hint = did_you_mean(name, known); !hint.empty()) return hint;
  std::string list;
  for (std::size_t i = 0; i < known.size(); ++i)
    list += (i == 0 ? "" : i + 1 == known.size() ? " or " : ", ") + known[i];
  return " (expected " + list + ")";
}

std::map<std::string, std::string> string_table(const toml::node& n, const std::string& file,
                                                const std::string& what) {
  std::map<std::string, std::string> out;
  const toml::table* t = n.as_table();
  if (!t) fail(toml_loc(n, file), "{} must be a table of strings", what);
  for (auto&& [k, v] : *t) {
    if (!v.is_string()) fail(toml_loc(v, file), "{}: '{}' must be a string", what, k.str());
    out[std::string(k.str())] = v.as_string()->get();
  }
  return out;
}

NkiNames parse_nki_names(const toml::table& doc, const std::string& file) {
  NkiNames out;
  const toml::node* n = doc.get("nki");
  if (!n) return out;
  const toml::table* t = n->as_table();
  if (!t) fail(toml_loc(*n, file), "nki must be a table ([nki.names], [nki.engines])");
  for (auto&& [k, v] : *t) {
    if (k == "names")
      out.names = string_table(v, file, "nki.names");
    else if (k == "engines")
      out.engines = string_table(v, file, "nki.engines");
    else if (k == "current_engines")
      out.current_engines = string_table(v, file, "nki.current_engines");
    else
      fail(toml_loc(v, file), "unknown key 'nki.{}'{}", k.str(),
           suggestion(std::string(k.str()), {"names", "engines", "current_engines"}));
  }
  return out;
}

// Checks an `nki` / `nki_current` template of `in` (every placeholder an operand, `out`, an
// attribute, a pattern dim, `engine` or `dtype`; the current API's also `scratch` and
// `accumulate`), records the NKI spellings it needs and returns it; UserError at the key.
std::string parse_nki(InstrSpec& in, const toml::node& n, const std::string& file,
                      const NkiNames& names, bool current) {
  const std::string& name = in.op.name;
  const char* key_name = current ? "nki_current" : "nki";
  SourceLoc loc = toml_loc(n, file);
  if (!n.is_string())
    fail(loc, "instruction '{}': {} must be a string (a call template)", name, key_name);
  std::string tmpl = n.as_string()->get();
  std::set<std::string> dims;
  std::vector<const Pattern*> patterns{&in.op.out};
  for (const auto& s : in.op.shapes) patterns.push_back(&s);
  for (const Pattern* p : patterns)
    for (const auto& it : p->items)
      if (!it.group && !it.name.empty()) dims.insert(it.name);
  std::string bad;
  auto check = [&](const std::string& key) -> std::string {
    if (!bad.empty()) return "";
    if (const AttrSpec* a = in.op.attr(key); a && a->type == AttrType::Name) {
      for (const auto& c : a->choices) {
        auto it = names.names.find(c);
        if (it == names.names.end())
          fail(loc,
               "instruction '{}': nki uses '{{{}}}', but '{}' has no NKI spelling (add it to "
               "[nki.names])",
               name, key, c);
        in.nki_names[c] = it->second;
      }
    } else if (key == "engine") {
      const auto& table = current ? names.current_engines : names.engines;
      for (Engine e : in.engines) {
        auto it = table.find(engine_name(e));
        if (it == table.end())
          fail(loc,
               "instruction '{}': {} uses '{{engine}}', but engine '{}' has no NKI spelling (add "
               "it to [nki.{}])",
               name, key_name, engine_name(e), current ? "current_engines" : "engines");
        in.nki_names[(current ? "current:" : "") + std::string(engine_name(e))] = it->second;
      }
    } else if (current && (key == "scratch" || key == "accumulate")) {
    } else if (key != "out" && key != "dtype" && in.op.operand_index(key) < 0 && !a &&
               !dims.count(key)) {
      bad = key;
    }
    return "";
  };
  std::string error;
  expand_nki(tmpl, check, &error);
  if (!error.empty())
    fail(loc, "instruction '{}': malformed {} template: {}", name, key_name, error);
  if (!bad.empty())
    fail(loc,
         "instruction '{}': unknown placeholder '{{{}}}' in {} (expected an operand, out, an "
         "attribute, a "
         "pattern dim, engine or dtype{})",
         name, bad, key_name, current ? ", scratch or accumulate" : "");
  if (current && tmpl.find("{out}") == std::string::npos)
    fail(loc,
         "instruction '{}': nki_current must name {{out}} (every call of the current API takes "
         "dst=)",
         name);
  return tmpl;
}

// True when `e` reads operand `name` only bare (at the output's element), never indexed.
bool reads_only_bare(const Expr& e, const std::string& name) {
  if (e.kind == Expr::Access && e.name == name) return false;
  for (const auto& item : e.items)
    if ((item.expr && !reads_only_bare(*item.expr, name)) ||
        (item.each && !reads_only_bare(*item.each, name)))
      return false;
  if (e.bound && !reads_only_bare(*e.bound, name)) return false;
  return std::all_of(e.args.begin(), e.args.end(),
                     [&](const ExprPtr& a) { return !a || reads_only_bare(*a, name); });
}

bool same_pattern(const Pattern& a, const Pattern& b) {
  if (a.items.size() != b.items.size()) return false;
  for (std::size_t i = 0; i < a.items.size(); ++i)
    if (to_string(a.items[i]) != to_string(b.items[i])) return false;
  return true;
}

// Fills the by-position fields from the by-name ones.
void index_by_position(InstrSpec& in) {
  auto limits_of = [&](const Pattern& p) {
    std::vector<std::int64_t> out;
    for (const auto& item : p.items) {
      auto it = item.group || item.name.empty() ? in.limits.end() : in.limits.find(item.name);
      out.push_back(it == in.limits.end() ? 0 : it->second);
    }
    return out;
  };
  for (std::size_t k = 0; k < in.op.operands.size(); ++k) {
    auto m = in.memory.find(in.op.operands[k]);
    in.operand_memory.push_back(m == in.memory.end() ? std::vector<Memory>{} : m->second);
    in.operand_limits.push_back(k < in.op.shapes.size() ? limits_of(in.op.shapes[k])
                                                        : std::vector<std::int64_t>{});
  }
  if (auto m = in.memory.find("out"); m != in.memory.end()) in.out_memory = m->second;
  in.out_limits = limits_of(in.op.out);
  auto slots_of = [&](const Pattern& p) {
    std::vector<int> out;
    for (const auto& item : p.items) {
      if (item.group || item.name.empty()) {
        out.push_back(-1);
        continue;
      }
      auto it = std::find(in.dim_names.begin(), in.dim_names.end(), item.name);
      out.push_back(static_cast<int>(it - in.dim_names.begin()));
      if (it == in.dim_names.end()) in.dim_names.push_back(item.name);
    }
    return out;
  };
  for (std::size_t k = 0; k < in.op.operands.size(); ++k)
    in.operand_dim_slots.push_back(k < in.op.shapes.size() ? slots_of(in.op.shapes[k])
                                                           : std::vector<int>{});
  in.out_dim_slots = slots_of(in.op.out);
  for (std::size_t k = 0; k < in.op.operands.size(); ++k)
    in.elementwise_operand.push_back(in.op.contract.empty() && k < in.op.shapes.size() &&
                                     same_pattern(in.op.shapes[k], in.op.out) && in.op.expr &&
                                     reads_only_bare(*in.op.expr, in.op.operands[k]));
}

const std::vector<std::string> kReducers = {"add", "mul", "max", "min"};

// `elementwise = { instr = "NAME", reduce_op = "add" }` or `{ instr = "NAME", reduce_attr =
// "ATTR" }`: read here, checked against the named instruction once the file is loaded
// (check_elementwise).
void parse_elementwise(InstrSpec& in, const toml::node& n, const std::string& file) {
  const std::string& name = in.op.name;
  const toml::table* t = n.as_table();
  SourceLoc loc = toml_loc(n, file);
  if (!t)
    fail(loc,
         "instruction '{}': elementwise must be a table {{ instr = \"NAME\", reduce_op = \"add\" "
         "}} (or reduce_attr = \"ATTR\")",
         name);
  for (auto&& [k, v] : *t) {
    std::string key(k.str());
    if (key != "instr" && key != "reduce_op" && key != "reduce_attr")
      fail(toml_loc(v, file), "instruction '{}': unknown key 'elementwise.{}'{}", name, key,
           suggestion(key, {"instr", "reduce_op", "reduce_attr"}));
    if (!v.is_string())
      fail(toml_loc(v, file), "instruction '{}': elementwise.{} must be a string", name, key);
  }
  auto get = [&](const char* key) {
    const toml::node* v = t->get(key);
    return v ? v->as_string()->get() : std::string();
  };
  in.elementwise = get("instr");
  in.reduce_op = get("reduce_op");
  in.reduce_attr = get("reduce_attr");
  if (in.elementwise.empty())
    fail(loc, "instruction '{}': elementwise needs instr = \"NAME\" (the element-wise instruction)",
         name);
  if (in.reduce_op.empty() == in.reduce_attr.empty())
    fail(loc,
         "instruction '{}': elementwise needs exactly one of reduce_op (add, mul, max or min) and "
         "reduce_attr (the name attribute holding it)",
         name);
  if (!in.reduce_op.empty() &&
      std::find(kReducers.begin(), kReducers.end(), in.reduce_op) == kReducers.end())
    fail(loc, "instruction '{}': elementwise.reduce_op '{}' is not a reducer{}", name, in.reduce_op,
         suggestion(in.reduce_op, kReducers));
  if (!in.reduce_attr.empty()) {
    const AttrSpec* a = in.op.attr(in.reduce_attr);
    if (!a || a->type != AttrType::Name)
      fail(loc, "instruction '{}': elementwise.reduce_attr '{}' is not one of its name attributes",
           name, in.reduce_attr);
    for (const auto& c : a->choices)
      if (std::find(kReducers.begin(), kReducers.end(), c) == kReducers.end())
        fail(loc,
             "instruction '{}': '{}' in the choices of '{}' is not a reducer (add, mul, max, min)",
             name, c, a->name);
  }
  if (in.op.contract.size() != 1 || in.op.out.items.size() != 2)
    fail(loc,
         "instruction '{}': elementwise needs a [p, 1] output reducing one contracted free dim",
         name);
}

// An `elementwise` key against the instruction it names: the same operands with the same
// patterns, an output of the same rank, and every attribute (but reduce_attr) one of its.
void check_elementwise(const InstrSpec& in, const InstrSpec* e, const SourceLoc& loc) {
  const std::string& name = in.op.name;
  if (!e || e == &in)
    fail(loc, "instruction '{}': elementwise names '{}', which is not another instruction", name,
         in.elementwise);
  if (e->op.operands != in.op.operands)
    fail(loc, "instruction '{}': its operands differ from those of '{}' (elementwise)", name,
         e->op.name);
  for (std::size_t k = 0; k < in.op.shapes.size() && k < e->op.shapes.size(); ++k)
    if (!same_pattern(in.op.shapes[k], e->op.shapes[k]))
      fail(loc, "instruction '{}': operand '{}' has another pattern in '{}' (elementwise)", name,
           in.op.operands[k], e->op.name);
  if (!e->op.contract.empty() || e->op.out.items.size() != in.op.out.items.size())
    fail(loc, "instruction '{}': '{}' (elementwise) is not element-wise over the same tile", name,
         e->op.name);
  for (const auto& a : in.op.attrs) {
    if (a.name == in.reduce_attr) continue;
    const AttrSpec* b = e->op.attr(a.name);
    if (!b || b->type != a.type)
      fail(loc, "instruction '{}': attribute '{}' is not one of '{}' (elementwise)", name, a.name,
           e->op.name);
  }
}

InstrSpec parse_instr(const std::string& name, const toml::table& t, const std::string& file,
                      const SourceLoc& loc, const NkiNames& names) {
  InstrSpec in;
  in.op = parse_op(
      name, t, file, loc,
      {"engines", "memory", "limits", "cost", "source", "nki", "nki_current", "elementwise"});
  const toml::node* engines = t.get("engines");
  if (!engines) fail(loc, "instruction '{}': missing key 'engines'", name);
  for (const auto& e : strings(*engines, file, "engines"))
    in.engines.push_back(parse_engine(e, toml_loc(*engines, file)));
  if (in.engines.empty())
    fail(toml_loc(*engines, file), "instruction '{}' needs at least one engine", name);
  if (const toml::node* m = t.get("memory")) {
    const toml::table* mt = m->as_table();
    if (!mt) fail(toml_loc(*m, file), "instruction '{}': memory must be a table", name);
    for (auto&& [k, v] : *mt) {
      std::string key(k.str());
      if (key != "out" && in.op.operand_index(key) < 0) {
        std::vector<std::string> known = in.op.operands;
        known.push_back("out");
        fail(toml_loc(v, file),
             "instruction '{}': memory given for '{}', which is not an operand or out{}", name, key,
             suggestion(key, known));
      }
      for (const auto& s : strings(v, file, "a memory list"))
        in.memory[key].push_back(parse_memory(s, toml_loc(v, file)));
    }
  }
  if (const toml::node* l = t.get("limits")) {
    const toml::table* lt = l->as_table();
    if (!lt) fail(toml_loc(*l, file), "instruction '{}': limits must be a table", name);
    for (auto&& [k, v] : *lt) {
      std::string key(k.str());
      if (!v.is_integer() || *v.value<std::int64_t>() < 1)
        fail(toml_loc(v, file), "instruction '{}': limit of '{}' must be a positive integer", name,
             key);
      if (!pattern_has_dim(in.op, key))
        fail(toml_loc(v, file),
             "instruction '{}': limit given for '{}', which is not a dim of its patterns{}", name,
             key, suggestion(key, pattern_dims(in.op)));
      in.limits[key] = *v.value<std::int64_t>();
    }
  }
  index_by_position(in);
  const toml::node* c = t.get("cost");
  if (!c || !c->is_string())
    fail(c ? toml_loc(*c, file) : loc, "instruction '{}': missing string key 'cost'", name);
  SourceLoc cl = toml_loc(*c, file);
  cl.col += 1;
  in.cost = parse_expr(c->as_string()->get(), cl);
  if (const toml::node* s = t.get("source"); s && s->is_string()) in.source = s->as_string()->get();
  if (const toml::node* n = t.get("nki")) in.nki = parse_nki(in, *n, file, names, false);
  if (const toml::node* n = t.get("nki_current"))
    in.nki_current = parse_nki(in, *n, file, names, true);
  if (const toml::node* e = t.get("elementwise")) parse_elementwise(in, *e, file);
  return in;
}

}  // namespace

const char* engine_name(Engine e) {
  switch (e) {
    case Engine::Tensor:
      return "tensor";
    case Engine::Vector:
      return "vector";
    case Engine::Scalar:
      return "scalar";
    case Engine::GpSimd:
      return "gpsimd";
    case Engine::Dma:
      return "dma";
  }
  return "?";
}

const char* memory_name(Memory m) {
  switch (m) {
    case Memory::Sbuf:
      return "sbuf";
    case Memory::Psum:
      return "psum";
    case Memory::Hbm:
      return "hbm";
  }
  return "?";
}

void InstrTable::load(std::string_view toml_text, const std::string& file_name,
                      const OpTable& ops) {
  digest_ = hash_combine(digest_, hash_bytes(toml_text));
  toml::table doc = parse_spec_toml(toml_text, file_name);
  const toml::table* instrs = doc.get("instr") ? doc.get("instr")->as_table() : nullptr;
  if (!instrs) fail(SourceLoc{file_name, 1, 1}, "no [instr.NAME] tables found");
  for (auto&& [k, v] : doc)
    if (k != "instr" && k != "nki" &&
        k != "legality")  // [legality]: the target's rules (target/legality.h)
      fail(toml_loc(v, file_name),
           "unknown top-level key '{}'{} (instructions go in [instr.NAME] tables)", k.str(),
           did_you_mean(std::string(k.str()), {"instr", "nki", "legality"}));
  NkiNames names = parse_nki_names(doc, file_name);
  for (auto&& [k, v] : *instrs) {
    std::string name(k.str());
    const toml::table* t = v.as_table();
    SourceLoc loc = toml_loc(v, file_name);
    if (!t) fail(loc, "instruction '{}' must be a table", name);
    InstrSpec spec = parse_instr(name, *t, file_name, loc, names);
    for (const auto& a : spec.op.attrs)
      for (const auto& c : a.choices)
        if (a.type == AttrType::Name && !ops.find(c) && c != "add" && c != "mul" && c != "max" &&
            c != "min")
          fail(loc, "instruction '{}': '{}' in the choices of '{}' is not an op", name, c, a.name);
    spec.id = static_cast<int>(instrs_.size());
    if (!instrs_.emplace(name, std::move(spec)).second)
      fail(loc, "instruction '{}' is defined twice", name);
  }
  for (auto&& [k, v] : *instrs) {
    const InstrSpec& in = instrs_.at(std::string(k.str()));
    if (in.elementwise.empty()) continue;
    const toml::node* e = v.as_table()->get("elementwise");
    check_elementwise(in, find(in.elementwise), toml_loc(*e, file_name));
  }
}

std::string InstrSpec::reducer(const AttrMap& attrs) const {
  if (!reduce_op.empty() || reduce_attr.empty()) return reduce_op;
  if (auto it = attrs.find(reduce_attr); it != attrs.end())
    if (const auto* s = std::get_if<std::string>(&it->second)) return *s;
  const AttrSpec* a = op.attr(reduce_attr);
  if (a && a->default_value)
    if (const auto* s = std::get_if<std::string>(&*a->default_value)) return *s;
  return "";
}

std::vector<const InstrSpec*> InstrTable::reducing_forms(std::string_view name) const {
  std::vector<const InstrSpec*> out;
  for (const auto& [k, v] : instrs_)
    if (v.elementwise == name) out.push_back(&v);
  return out;
}

std::string expand_nki(std::string_view tmpl,
                       const std::function<std::string(const std::string&)>& value,
                       std::string* error) {
  std::string out;
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    char c = tmpl[i];
    if ((c == '{' || c == '}') && i + 1 < tmpl.size() && tmpl[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}') {
      *error =
          fmt::format("'}}' at column {} closes nothing (write '}}}}' for a literal brace)", i + 1);
      return "";
    }
    if (c != '{') {
      out += c;
      continue;
    }
    std::size_t end = tmpl.find('}', i);
    if (end == std::string_view::npos) {
      *error = fmt::format("'{{' at column {} is not closed", i + 1);
      return "";
    }
    std::string key(tmpl.substr(i + 1, end - i - 1));
    bool ident = !key.empty() && !std::isdigit(static_cast<unsigned char>(key[0]));
    for (char k : key) ident = ident && (std::isalnum(static_cast<unsigned char>(k)) || k == '_');
    if (!ident) {
      *error =
          fmt::format("'{{{}}}' at column {} is not a placeholder (a name in braces)", key, i + 1);
      return "";
    }
    out += value(key);
    i = end;
  }
  return out;
}

const InstrSpec* InstrTable::find(std::string_view name) const {
  auto it = instrs_.find(name);
  return it == instrs_.end() ? nullptr : &it->second;
}

std::vector<std::string> InstrTable::names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : instrs_) out.push_back(k);
  return out;
}

}  // namespace ts::sem

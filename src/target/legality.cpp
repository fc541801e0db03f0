#include "tilesweep/target/legality.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>

#include "tilesweep/base/error.h"
#include "tilesweep/base/source.h"
#include "tilesweep/base/toml_reader.h"

namespace ts::target {

namespace {

SourceLoc loc_of(const toml::node& n, const std::string& file) {
  return SourceLoc{file, static_cast<int>(n.source().begin.line),
                   static_cast<int>(n.source().begin.column)};
}

std::vector<std::string> strings(const toml::table& t, const std::string& key,
                                 const std::string& where, const std::string& file) {
  std::vector<std::string> out;
  const toml::node* n = t.get(key);
  if (!n) return out;
  const toml::array* a = n->as_array();
  if (!a) fail(loc_of(*n, file), "'{}.{}' must be a list of names", where, key);
  for (const auto& v : *a) {
    if (!v.is_string()) fail(loc_of(v, file), "'{}.{}' must be a list of names", where, key);
    out.push_back(v.as_string()->get());
  }
  return out;
}

std::string source_of(const toml::table& t, const std::string& where, const std::string& file) {
  const toml::node* s = t.get("source");
  if (!s || !s->is_string() || s->as_string()->get().empty())
    fail(loc_of(t, file),
         "'{}' needs a source: the documented rule it encodes (e.g. source = \"S1 ...\")", where);
  return s->as_string()->get();
}

sem::Engine engine_named(const std::string& name, const toml::node& at, const std::string& file) {
  for (auto e : {sem::Engine::Tensor, sem::Engine::Vector, sem::Engine::Scalar, sem::Engine::GpSimd,
                 sem::Engine::Dma})
    if (name == sem::engine_name(e)) return e;
  fail(loc_of(at, file), "unknown engine '{}' (engines: tensor, vector, scalar, gpsimd, dma)",
       name);
}

sem::Memory memory_named(const std::string& name, const toml::node& at, const std::string& file) {
  for (auto m : {sem::Memory::Sbuf, sem::Memory::Psum, sem::Memory::Hbm})
    if (name == sem::memory_name(m)) return m;
  fail(loc_of(at, file), "unknown memory '{}' (memories: sbuf, psum, hbm)", name);
}

sem::AttrMap attr_values(const toml::table& t, const std::string& key, const std::string& file) {
  sem::AttrMap out;
  const toml::node* n = t.get(key);
  if (!n) return out;
  const toml::table* values = n->as_table();
  if (!values)
    fail(loc_of(*n, file), "'{}' must be a table of attribute values, e.g. {{ op0 = \"add\" }}",
         key);
  for (auto&& [k, v] : *values) {
    if (v.is_string())
      out[std::string(k.str())] = v.as_string()->get();
    else if (v.is_integer())
      out[std::string(k.str())] = *v.value<std::int64_t>();
    else if (v.is_floating_point())
      out[std::string(k.str())] = *v.value<double>();
    else if (v.is_boolean())
      out[std::string(k.str())] = *v.value<bool>();
    else
      fail(loc_of(v, file), "attribute '{}' must be a name, a number or a bool", k.str());
  }
  return out;
}

// Every key of `t` is one of `keys`: else "unknown key 'k' in [where]; did you mean 'x'?".
void check_keys(const toml::table& t, const std::vector<std::string>& keys,
                const std::string& where, const std::string& file) {
  TomlReader(file).check_keys(t, keys, "[" + where + "]");
}

void parse_engines(const toml::table& engines, Legality& l, const std::string& file) {
  for (auto&& [k, v] : engines) {
    std::string where = "legality.engine." + std::string(k.str());
    const toml::table* t = v.as_table();
    if (!t) fail(loc_of(v, file), "'{}' must be a table", where);
    check_keys(*t, {"memory", "alu", "source"}, where, file);
    EngineRules r;
    for (const auto& m : strings(*t, "memory", where, file))
      r.memory.push_back(memory_named(m, v, file));
    r.alu = strings(*t, "alu", where, file);
    r.source = source_of(*t, where, file);
    l.engines[engine_named(std::string(k.str()), v, file)] = std::move(r);
  }
}

void parse_requirements(const toml::array& rows, Legality& l, const std::string& file) {
  for (const auto& row : rows) {
    const toml::table* t = row.as_table();
    if (!t) fail(loc_of(row, file), "'legality.require' rows are tables");
    check_keys(*t, {"instr", "engine", "when", "require", "source"}, "[legality.require]", file);
    AttrRequirement r;
    const toml::node* instr = t->get("instr");
    const toml::node* engine = t->get("engine");
    if (!instr || !instr->is_string() || !engine || !engine->is_string())
      fail(loc_of(row, file), "a 'legality.require' row names its instr and engine (strings)");
    r.instr = instr->as_string()->get();
    r.engine = engine_named(engine->as_string()->get(), *engine, file);
    r.when = attr_values(*t, "when", file);
    r.require = attr_values(*t, "require", file);
    if (r.require.empty())
      fail(loc_of(row, file), "a 'legality.require' row needs a 'require' table");
    r.source = source_of(*t, "legality.require", file);
    l.requirements.push_back(std::move(r));
  }
}

// The attribute's value as the instruction runs it: as given, else the spec's default.
const sem::AttrValue* value_of(const sem::InstrSpec& in, const sem::AttrMap& attrs,
                               const std::string& name) {
  if (auto it = attrs.find(name); it != attrs.end()) return &it->second;
  const sem::AttrSpec* a = in.op.attr(name);
  return a && a->default_value ? &*a->default_value : nullptr;
}

// Values compare by their text, as the rules are written (an integer 1 equals a float 1.0);
// names, integers and bools of the same type directly, which gives the same answer.
bool same_value(const sem::AttrValue& a, const sem::AttrValue& b) {
  if (a.index() == b.index()) {
    if (const auto* s = std::get_if<std::string>(&a)) return *s == std::get<std::string>(b);
    if (const auto* i = std::get_if<std::int64_t>(&a)) return *i == std::get<std::int64_t>(b);
    if (const auto* f = std::get_if<bool>(&a)) return *f == std::get<bool>(b);
  }
  return sem::to_string(a) == sem::to_string(b);
}

bool matches(const sem::InstrSpec& in, const sem::AttrMap& attrs, const sem::AttrMap& want) {
  for (const auto& [name, v] : want) {
    const sem::AttrValue* have = value_of(in, attrs, name);
    if (!have || !same_value(*have, v)) return false;
  }
  return true;
}

// (`explain` false: the rule only, no message.)
Breach memory_breach(const EngineRules& r, const sem::InstrSpec& in, sem::Engine e,
                     std::span<const sem::Memory> operands, const sem::Memory* out, bool explain) {
  auto reaches = [&](sem::Memory m) {
    return r.memory.empty() || std::count(r.memory.begin(), r.memory.end(), m) > 0;
  };
  for (std::size_t i = 0; i < operands.size(); ++i)
    if (!reaches(operands[i])) {
      if (!explain) return {Rule::Memory, {}};
      return {
          Rule::Memory,
          fmt::format("{} cannot access {} ({} reads its operand {} there; {})",
                      sem::engine_name(e), sem::memory_name(operands[i]), in.op.name,
                      i < in.op.operands.size() ? in.op.operands[i] : std::to_string(i), r.source)};
    }
  if (!out || reaches(*out)) return {};
  if (!explain) return {Rule::Memory, {}};
  return {Rule::Memory,
          fmt::format("{} cannot access {} ({} writes its result there; {})", sem::engine_name(e),
                      sem::memory_name(*out), in.op.name, r.source)};
}

}  // namespace

const char* rule_name(Rule r) {
  switch (r) {
    case Rule::None:
      return "none";
    case Rule::Memory:
      return "memory";
    case Rule::Operator:
      return "operator";
    case Rule::Requirement:
      return "requirement";
  }
  return "?";
}

namespace {

// Operator names are short: compared inline, without a call to memcmp.
bool same_name(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// True when the resolved rules find nothing to object to; false sends the instruction to the
// rules as written (check_by_name), which name the breach or find none.
bool keeps(const Legality& l, const ResolvedRules& r, const sem::InstrSpec& in,
           std::span<const sem::Memory> operands, const sem::Memory* out,
           const sem::AttrMap& attrs) {
  for (sem::Memory m : operands)
    if (!r.reaches(m)) return false;
  if (out && !r.reaches(*out)) return false;
  for (const auto& o : r.operators) {
    const sem::AttrValue* v = value_of(in, attrs, o.attr);
    const std::string* op = v ? std::get_if<std::string>(v) : nullptr;
    if (op && std::none_of(o.allowed.begin(), o.allowed.end(),
                           [&](const std::string& a) { return same_name(a, *op); }))
      return false;
  }
  for (int i : r.requirements) {
    const AttrRequirement& req = l.requirements[static_cast<std::size_t>(i)];
    if (matches(in, attrs, req.when) && !matches(in, attrs, req.require)) return false;
  }
  return true;
}

ResolvedRules resolve(const Legality& l, const sem::InstrSpec& in, sem::Engine engine) {
  ResolvedRules out;
  if (auto it = l.engines.find(engine); it != l.engines.end()) {
    const EngineRules& r = it->second;
    if (!r.memory.empty()) {
      out.memories = 0;
      for (sem::Memory m : r.memory) out.memories |= 1u << static_cast<unsigned>(m);
    }
    for (const auto& name : l.alu_attributes) {
      const sem::AttrSpec* a = in.op.attr(name);
      if (!a) continue;
      // A value outside the attribute's choices is not in `allowed`: the rules as written
      // decide it (check_by_name).
      ResolvedRules::Operator o{name, {}};
      for (const auto& op : r.alu)
        if (a->choices.empty() || std::count(a->choices.begin(), a->choices.end(), op) > 0)
          o.allowed.push_back(op);
      out.operators.push_back(std::move(o));
    }
  }
  for (std::size_t i = 0; i < l.requirements.size(); ++i)
    if (l.requirements[i].instr == in.op.name && l.requirements[i].engine == engine)
      out.requirements.push_back(static_cast<int>(i));
  return out;
}

// The rules as written, name by name (`explain` false: the rule only, no message).
Breach check_by_name(const Legality& l, const sem::InstrSpec& in, sem::Engine engine,
                     std::span<const sem::Memory> operands, const sem::Memory* out,
                     const sem::AttrMap& attrs, bool explain) {
  if (auto it = l.engines.find(engine); it != l.engines.end()) {
    const EngineRules& r = it->second;
    if (Breach b = memory_breach(r, in, engine, operands, out, explain)) return b;
    for (const auto& name : l.alu_attributes) {
      const sem::AttrValue* v = value_of(in, attrs, name);
      const std::string* op = v ? std::get_if<std::string>(v) : nullptr;
      if (!op || std::find(r.alu.begin(), r.alu.end(), *op) != r.alu.end()) continue;
      if (!explain) return {Rule::Operator, {}};
      return {Rule::Operator,
              fmt::format("{} has no ALU operator '{}' ({} {} = {}; {})", sem::engine_name(engine),
                          *op, in.op.name, name, *op, r.source)};
    }
  }
  for (const auto& req : l.requirements)
    if (req.engine == engine && req.instr == in.op.name && matches(in, attrs, req.when) &&
        !matches(in, attrs, req.require))
      return !explain
                 ? Breach{Rule::Requirement, {}}
                 : Breach{Rule::Requirement,
                          fmt::format("{} on {} with {} needs {} ({})", in.op.name,
                                      sem::engine_name(engine),
                                      sem::to_string(req.when.begin()->second),
                                      sem::to_string(req.require.begin()->second), req.source)};
  return {};
}

}  // namespace

void resolve_legality(Legality& l, const sem::InstrTable& isa) {
  l.resolved.clear();
  for (const auto& name : isa.names()) {
    const sem::InstrSpec* in = isa.find(name);
    if (in->id < 0) continue;
    if (l.resolved.size() <= static_cast<std::size_t>(in->id))
      l.resolved.resize(static_cast<std::size_t>(in->id) + 1);
    Legality::Resolved& r = l.resolved[static_cast<std::size_t>(in->id)];
    r.spec = in;
    for (auto e : {sem::Engine::Tensor, sem::Engine::Vector, sem::Engine::Scalar,
                   sem::Engine::GpSimd, sem::Engine::Dma})
      r.by_engine.push_back(resolve(l, *in, e));
  }
}

const ResolvedRules* resolved_rules(const Legality& l, const sem::InstrSpec& in,
                                    sem::Engine engine) {
  auto id = static_cast<std::size_t>(in.id);
  if (in.id < 0 || id >= l.resolved.size() || l.resolved[id].spec != &in) return nullptr;
  return &l.resolved[id].by_engine[static_cast<std::size_t>(engine)];
}

Breach check_instruction(const Legality& l, const sem::InstrSpec& in, sem::Engine engine,
                         std::span<const sem::Memory> operands, const sem::Memory* out,
                         const sem::AttrMap& attrs) {
  const ResolvedRules* r = resolved_rules(l, in, engine);
  if (r && keeps(l, *r, in, operands, out, attrs)) return {};
  return check_by_name(l, in, engine, operands, out, attrs, true);
}

bool keeps_rules(const Legality& l, const sem::InstrSpec& in, sem::Engine engine,
                 std::span<const sem::Memory> operands, const sem::Memory* out,
                 const sem::AttrMap& attrs) {
  const ResolvedRules* r = resolved_rules(l, in, engine);
  if (r && keeps(l, *r, in, operands, out, attrs)) return true;
  return !check_by_name(l, in, engine, operands, out, attrs, false);
}

Legality parse_legality(const std::string& isa_text, const std::string& isa_file) {
  toml::table doc;
  try {
    doc = toml::parse(isa_text, isa_file);
  } catch (const toml::parse_error& e) {
    fail(SourceLoc{isa_file, static_cast<int>(e.source().begin.line),
                   static_cast<int>(e.source().begin.column)},
         "{}", e.description());
  }
  Legality l;
  const toml::node* n = doc.get("legality");
  if (!n) return l;
  const toml::table* t = n->as_table();
  if (!t) fail(loc_of(*n, isa_file), "'legality' must be a table");
  check_keys(*t, {"engine", "require", "alu_attributes"}, "legality", isa_file);
  l.alu_attributes = strings(*t, "alu_attributes", "legality", isa_file);
  if (const toml::node* e = t->get("engine")) {
    if (!e->is_table())
      fail(loc_of(*e, isa_file), "'legality.engine' must hold one table per engine");
    parse_engines(*e->as_table(), l, isa_file);
  }
  if (const toml::node* r = t->get("require")) {
    if (!r->is_array())
      fail(loc_of(*r, isa_file),
           "'legality.require' must be a list of tables ([[legality.require]])");
    parse_requirements(*r->as_array(), l, isa_file);
  }
  return l;
}

}  // namespace ts::target

#include "tilesweep/semantics/instr_spec.h"

#include "spec_parse.h"

namespace ts::sem {

namespace {

Engine parse_engine(const std::string& s, const SourceLoc& loc) {
  static const std::pair<const char*, Engine> names[] = {{"tensor", Engine::Tensor}, {"vector", Engine::Vector},
                                                         {"scalar", Engine::Scalar}, {"gpsimd", Engine::GpSimd},
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

InstrSpec parse_instr(const std::string& name, const toml::table& t, const std::string& file, const SourceLoc& loc) {
  InstrSpec in;
  in.op = parse_op(name, t, file, loc, {"engines", "memory", "limits", "cost", "source"});
  const toml::node* engines = t.get("engines");
  if (!engines) fail(loc, "instruction '{}': missing key 'engines'", name);
  for (const auto& e : strings(*engines, file, "engines")) in.engines.push_back(parse_engine(e, toml_loc(*engines, file)));
  if (in.engines.empty()) fail(toml_loc(*engines, file), "instruction '{}' needs at least one engine", name);
  if (const toml::node* m = t.get("memory")) {
    const toml::table* mt = m->as_table();
    if (!mt) fail(toml_loc(*m, file), "instruction '{}': memory must be a table", name);
    for (auto&& [k, v] : *mt) {
      std::string key(k.str());
      if (key != "out" && in.op.operand_index(key) < 0)
        fail(toml_loc(v, file), "instruction '{}': memory given for '{}', which is not an operand or out", name, key);
      for (const auto& s : strings(v, file, "a memory list")) in.memory[key].push_back(parse_memory(s, toml_loc(v, file)));
    }
  }
  if (const toml::node* l = t.get("limits")) {
    const toml::table* lt = l->as_table();
    if (!lt) fail(toml_loc(*l, file), "instruction '{}': limits must be a table", name);
    for (auto&& [k, v] : *lt) {
      std::string key(k.str());
      if (!v.is_integer() || *v.value<std::int64_t>() < 1)
        fail(toml_loc(v, file), "instruction '{}': limit of '{}' must be a positive integer", name, key);
      if (!pattern_has_dim(in.op, key))
        fail(toml_loc(v, file), "instruction '{}': limit given for '{}', which is not a dim of its patterns", name, key);
      in.limits[key] = *v.value<std::int64_t>();
    }
  }
  const toml::node* c = t.get("cost");
  if (!c || !c->is_string()) fail(c ? toml_loc(*c, file) : loc, "instruction '{}': missing string key 'cost'", name);
  SourceLoc cl = toml_loc(*c, file);
  cl.col += 1;
  in.cost = parse_expr(c->as_string()->get(), cl);
  if (const toml::node* s = t.get("source"); s && s->is_string()) in.source = s->as_string()->get();
  return in;
}

}  // namespace

const char* engine_name(Engine e) {
  switch (e) {
    case Engine::Tensor: return "tensor";
    case Engine::Vector: return "vector";
    case Engine::Scalar: return "scalar";
    case Engine::GpSimd: return "gpsimd";
    case Engine::Dma: return "dma";
  }
  return "?";
}

const char* memory_name(Memory m) {
  switch (m) {
    case Memory::Sbuf: return "sbuf";
    case Memory::Psum: return "psum";
    case Memory::Hbm: return "hbm";
  }
  return "?";
}

void InstrTable::load(std::string_view toml_text, const std::string& file_name, const OpTable& ops) {
  toml::table doc = parse_spec_toml(toml_text, file_name);
  const toml::table* instrs = doc.get("instr") ? doc.get("instr")->as_table() : nullptr;
  if (!instrs) fail(SourceLoc{file_name, 1, 1}, "no [instr.NAME] tables found");
  for (auto&& [k, v] : doc)
    if (k != "instr") fail(toml_loc(v, file_name), "unknown top-level key '{}' (instructions go in [instr.NAME] tables)", k.str());
  for (auto&& [k, v] : *instrs) {
    std::string name(k.str());
    const toml::table* t = v.as_table();
    SourceLoc loc = toml_loc(v, file_name);
    if (!t) fail(loc, "instruction '{}' must be a table", name);
    InstrSpec spec = parse_instr(name, *t, file_name, loc);
    for (const auto& a : spec.op.attrs)
      for (const auto& c : a.choices)
        if (a.type == AttrType::Name && !ops.find(c) && c != "add" && c != "mul" && c != "max" && c != "min")
          fail(loc, "instruction '{}': '{}' in the choices of '{}' is not an op", name, c, a.name);
    if (!instrs_.emplace(name, std::move(spec)).second) fail(loc, "instruction '{}' is defined twice", name);
  }
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

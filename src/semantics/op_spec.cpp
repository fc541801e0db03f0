#include "tilesweep/semantics/op_spec.h"

#include <toml++/toml.h>

#include <algorithm>
#include <optional>
#include <set>

#include "spec_parse.h"

namespace ts::embedded {
extern const std::string_view ops_toml;
}

namespace ts::sem {

namespace {

SourceLoc loc_of(const toml::node& n, const std::string& file) { return toml_loc(n, file); }

// Location of a string value's first character, for errors inside spec strings.
SourceLoc string_loc(const toml::node& n, const std::string& file) {
  SourceLoc loc = loc_of(n, file);
  loc.col += 1;  // skip the opening quote
  return loc;
}

std::string get_string(const toml::table& t, std::string_view key, const std::string& file,
                       const SourceLoc& owner, bool required) {
  const toml::node* n = t.get(key);
  if (!n) {
    if (required) fail(owner, "missing key '{}'", key);
    return {};
  }
  if (!n->is_string()) fail(loc_of(*n, file), "'{}' must be a string", key);
  return n->as_string()->get();
}

std::vector<std::string> get_strings(const toml::table& t, std::string_view key,
                                     const std::string& file) {
  std::vector<std::string> out;
  const toml::node* n = t.get(key);
  if (!n) return out;
  const toml::array* a = n->as_array();
  if (!a) fail(loc_of(*n, file), "'{}' must be an array of strings", key);
  for (const auto& v : *a) {
    if (!v.is_string()) fail(loc_of(v, file), "'{}' must be an array of strings", key);
    out.push_back(v.as_string()->get());
  }
  return out;
}

AttrType parse_attr_type(const std::string& s, const SourceLoc& loc) {
  static const std::pair<const char*, AttrType> types[] = {
      {"bool", AttrType::Bool},  {"int", AttrType::Int},      {"float", AttrType::Float},
      {"dim", AttrType::Dim},    {"dims", AttrType::Dims},    {"axis", AttrType::Axis},
      {"axes", AttrType::Axes},  {"name", AttrType::Name},    {"func", AttrType::Name},
      {"binop", AttrType::Name}, {"reduceop", AttrType::Name}};
  for (auto& [n, t] : types)
    if (s == n) return t;
  fail(loc,
       "unknown attribute type '{}' (expected bool, int, float, dim, dims, axis, axes, name, func, "
       "binop or reduceop)",
       s);
}

AttrSpec parse_attr(const toml::node& n, const OpSpec& op, const toml::table& owner,
                    const std::string& file) {
  const toml::table* t = n.as_table();
  SourceLoc loc = loc_of(n, file);
  if (!t) fail(loc, "an attribute must be a table like {{ name = \"axis\", type = \"axis\" }}");
  AttrSpec a;
  a.name = get_string(*t, "name", file, loc, true);
  std::string type = get_string(*t, "type", file, loc, true);
  a.type = parse_attr_type(type, loc);
  if (a.type == AttrType::Name) {
    // The allowed names: `choices` in the attribute, or the op's `funcs` / `binops` / `reduceops`.
    a.choices = get_strings(*t, "choices", file);
    if (a.choices.empty() && type != "name") a.choices = get_strings(owner, type + "s", file);
    if (a.choices.empty())
      fail(loc, "attribute '{}' of type {} needs its allowed names (`choices`, or `{}s` in the op)",
           a.name, type, type);
  }
  a.of = get_string(*t, "of", file, loc, false);
  if ((a.type == AttrType::Axis || a.type == AttrType::Axes) && op.operand_index(a.of) < 0)
    fail(loc, "attribute '{}' of type {} needs `of` naming an operand of '{}'", a.name,
         to_string(a.type), op.name);
  if (const toml::node* d = t->get("default")) {
    if (auto b = d->value<bool>(); b && d->is_boolean())
      a.default_value = *b;
    else if (d->is_integer())
      a.default_value = static_cast<std::int64_t>(*d->value<std::int64_t>());
    else if (d->is_floating_point())
      a.default_value = *d->value<double>();
    else if (d->is_string() && d->as_string()->get() == "reversed" && a.type == AttrType::Axes)
      a.default_reversed = true;
    else if (d->is_string() && a.type == AttrType::Name)
      a.default_value = d->as_string()->get();
    else
      fail(loc_of(*d, file), "unsupported default for attribute '{}'", a.name);
  }
  for (auto&& [k, v] : *t) {
    if (k != "name" && k != "type" && k != "of" && k != "default" && k != "choices")
      fail(loc_of(v, file),
           "unknown attribute key '{}'{} (expected name, type, of, default, choices)", k.str(),
           key_hint(k.str(), {"name", "type", "of", "default", "choices"}));
  }
  return a;
}

// Names of the scalar dims an operand pattern binds.
void collect_dims(const Pattern& p, std::set<std::string>& out) {
  for (const Item& it : p.items)
    if (!it.group && !it.name.empty()) out.insert(it.name);
}

void check_contract(const OpSpec& op, const SourceLoc& loc) {
  std::set<std::string> in, outs;
  for (const Pattern& p : op.shapes) collect_dims(p, in);
  for (const Item& it : op.out.items)
    if (!it.group && !it.name.empty()) outs.insert(it.name);
  std::set<std::string> declared(op.contract.begin(), op.contract.end());
  for (const std::string& d : declared)
    if (!in.count(d) || outs.count(d))
      fail(loc, "op '{}': contract lists '{}', which is not an operand dim missing from the output",
           op.name, d);
}

// `dtype = "promote(a, b)" | "cast(attr)" | "f32"`: see OpSpec.
void parse_dtype_rule(OpSpec& op, const toml::node& n, const std::string& file) {
  SourceLoc loc = loc_of(n, file);
  if (!n.is_string())
    fail(loc, "op '{}': dtype must be a string: promote(operands...), cast(attribute) or a dtype",
         op.name);
  std::string s = n.as_string()->get();
  s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
  auto inner = [&](std::string_view head) -> std::optional<std::string> {
    if (s.size() < head.size() + 2 || s.compare(0, head.size(), head) != 0 || s.back() != ')' ||
        s[head.size()] != '(')
      return std::nullopt;
    return s.substr(head.size() + 1, s.size() - head.size() - 2);
  };
  if (auto args = inner("promote")) {
    std::size_t at = 0;
    while (at <= args->size()) {
      std::size_t comma = args->find(',', at);
      std::string a = args->substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      if (op.operand_index(a) < 0)
        fail(loc, "op '{}': dtype promotes '{}', which is not an operand", op.name, a);
      op.dtype_from.push_back(a);
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
  } else if (auto attr = inner("cast")) {
    const AttrSpec* a = op.attr(*attr);
    if (!a || a->type != AttrType::Name)
      fail(loc, "op '{}': dtype casts to '{}', which is not a name attribute of the op", op.name,
           *attr);
    op.dtype_cast = *attr;
  } else if (s == "f32" || s == "bf16" || s == "f16" || s == "f8") {
    op.dtype_fixed = s;
  } else {
    fail(loc,
         "op '{}': dtype '{}' is none of promote(operands...), cast(attribute), f32, bf16, f16, f8",
         op.name, s);
  }
}

}  // namespace

OpSpec parse_op(const std::string& name, const toml::table& t, const std::string& file,
                const SourceLoc& loc, const std::set<std::string>& extra_keys) {
  static const std::set<std::string> keys = {
      "doc",      "operands", "attrs", "args",  "shape",  "broadcast", "out",   "contract",
      "requires", "expr",     "fold",  "funcs", "binops", "reduceops", "dtype", "chunk"};
  for (auto&& [k, v] : t) {
    if (!keys.count(std::string(k.str())) && !extra_keys.count(std::string(k.str()))) {
      std::set<std::string> all = keys;
      all.insert(extra_keys.begin(), extra_keys.end());
      fail(loc_of(v, file), "op '{}': unknown key '{}'{}", name, k.str(), key_hint(k.str(), all));
    }
  }
  OpSpec op;
  op.name = name;
  op.loc = loc;
  op.doc = get_string(t, "doc", file, loc, false);
  op.chunk = get_string(t, "chunk", file, loc, false);
  op.operands = get_strings(t, "operands", file);
  if (const toml::node* a = t.get("attrs")) {
    const toml::array* arr = a->as_array();
    if (!arr) fail(loc_of(*a, file), "op '{}': attrs must be an array of tables", name);
    for (const auto& n : *arr) op.attrs.push_back(parse_attr(n, op, t, file));
  }
  op.args = get_strings(t, "args", file);
  if (op.args.empty()) {
    op.args = op.operands;
    for (const auto& a : op.attrs) op.args.push_back(a.name);
  }
  for (const auto& a : op.args)
    if (op.operand_index(a) < 0 && !op.attr(a))
      fail(loc, "op '{}': args lists '{}', which is neither an operand nor an attribute", name, a);

  bool all_default = true;
  const toml::table* shapes = t.get("shape") ? t.get("shape")->as_table() : nullptr;
  if (t.get("shape") && !shapes)
    fail(loc_of(*t.get("shape"), file), "op '{}': shape must be a table", name);
  for (const auto& operand : op.operands) {
    const toml::node* n = shapes ? shapes->get(operand) : nullptr;
    if (n && !n->is_string())
      fail(loc_of(*n, file), "op '{}': shape of '{}' must be a string", name, operand);
    if (n) all_default = false;
    op.shapes.push_back(n ? parse_pattern(n->as_string()->get(), string_loc(*n, file))
                          : parse_pattern("[*S]", loc));
  }
  if (shapes) {
    for (auto&& [k, v] : *shapes)
      if (op.operand_index(k.str()) < 0)
        fail(loc_of(v, file), "op '{}': shape given for '{}', which is not an operand", name,
             k.str());
  }
  const toml::node* out = t.get("out");
  if (out && !out->is_string()) fail(loc_of(*out, file), "op '{}': out must be a string", name);
  op.out = out ? parse_pattern(out->as_string()->get(), string_loc(*out, file))
               : parse_pattern("[*S]", loc);
  op.broadcast = get_strings(t, "broadcast", file);
  if (!t.get("broadcast") && all_default && !out) op.broadcast = {"S"};
  op.contract = get_strings(t, "contract", file);
  if (const toml::node* r = t.get("requires")) {
    const toml::array* arr = r->as_array();
    if (!arr) fail(loc_of(*r, file), "op '{}': requires must be an array of strings", name);
    for (const auto& n : *arr) {
      if (!n.is_string())
        fail(loc_of(n, file), "op '{}': requires must be an array of strings", name);
      op.requirements.push_back(parse_requirement(n.as_string()->get(), string_loc(n, file)));
    }
  }
  const toml::node* e = t.get("expr");
  if (!e || !e->is_string())
    fail(e ? loc_of(*e, file) : loc, "op '{}': missing string key 'expr'", name);
  op.expr = parse_expr(e->as_string()->get(), string_loc(*e, file));
  if (const toml::node* f = t.get("fold")) {
    if (!f->is_boolean()) fail(loc_of(*f, file), "op '{}': fold must be true or false", name);
    op.fold = *f->value<bool>();
    if (op.fold && op.operands.size() != 2)
      fail(loc_of(*f, file), "op '{}': fold needs exactly two operands", name);
  }
  if (const toml::node* d = t.get("dtype")) parse_dtype_rule(op, *d, file);
  check_contract(op, loc);
  return op;
}

const AttrSpec* OpSpec::attr(std::string_view n) const {
  for (const auto& a : attrs)
    if (a.name == n) return &a;
  return nullptr;
}

int OpSpec::operand_index(std::string_view n) const {
  for (std::size_t i = 0; i < operands.size(); ++i)
    if (operands[i] == n) return static_cast<int>(i);
  return -1;
}

const OpTable& OpTable::builtin() {
  static const OpTable table = [] {
    OpTable t;
    t.load(embedded::ops_toml, "src/semantics/ops.toml");
    return t;
  }();
  return table;
}

void OpTable::load(std::string_view toml_text, const std::string& file_name) {
  toml::table doc = parse_spec_toml(toml_text, file_name);
  for (auto&& [k, v] : doc) {
    if (k != "op")
      fail(loc_of(v, file_name), "unknown top-level key '{}' (ops go in [op.NAME] tables)",
           k.str());
  }
  const toml::table* ops = doc.get("op") ? doc.get("op")->as_table() : nullptr;
  if (!ops) fail(SourceLoc{file_name, 1, 1}, "no [op.NAME] tables found");
  for (auto&& [k, v] : *ops) {
    std::string name(k.str());
    SourceLoc loc = loc_of(v, file_name);
    const toml::table* t = v.as_table();
    if (!t) fail(loc, "op '{}' must be a table", name);
    if (ops_.count(name))
      fail(loc, "op '{}' is already defined (by {})", name,
           format_loc(ops_.find(name)->second.loc));
    ops_.emplace(name, parse_op(name, *t, file_name, loc, {}));
  }
}

const OpSpec* OpTable::find(std::string_view name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpTable::names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : ops_) out.push_back(k);
  return out;
}

}  // namespace ts::sem

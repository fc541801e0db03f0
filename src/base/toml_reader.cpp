#include "tilesweep/base/toml_reader.h"

#include <fmt/ranges.h>

#include <algorithm>

#include "tilesweep/base/suggest.h"

namespace ts {

const char* toml_type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::none:
      return "nothing";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "a list";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
  }
  return "a value";
}

toml::table TomlReader::parse(std::string_view text) const {
  try {
    return toml::parse(text, file_);
  } catch (const toml::parse_error& e) {
    fail(at(e.source()), "{}", e.description());
  }
}

SourceLoc TomlReader::at(const toml::source_region& r) const {
  if (r.begin.line == 0) return SourceLoc{file_, 1, 1};
  return SourceLoc{file_, static_cast<int>(r.begin.line), static_cast<int>(r.begin.column)};
}

void TomlReader::check_keys(const toml::table& t, const std::vector<std::string>& keys,
                            std::string_view where) const {
  for (auto&& [k, v] : t) {
    std::string key(k.str());
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    std::string hint = did_you_mean(key, keys);
    if (hint.empty()) hint = fmt::format(" (its keys: {})", fmt::join(keys, ", "));
    fail(at(k), "unknown key '{}' in {}{}", key, where, hint);
  }
}

const toml::table* TomlReader::table(const toml::table& t, std::string_view key) const {
  const toml::node* n = t.get(key);
  if (!n) return nullptr;
  if (!n->is_table())
    fail(at(*n), "'{}' must be a table ([{}]), not {}", key, key, toml_type_name(*n));
  return n->as_table();
}

const toml::table& TomlReader::section(const toml::table& doc, std::string_view path) const {
  const toml::node* n = doc.at_path(path).node();
  if (!n) fail(SourceLoc{file_, 1, 1}, "missing table [{}]", path);
  if (!n->is_table())
    fail(at(*n), "'{}' must be a table ([{}]), not {}", path, path, toml_type_name(*n));
  return *n->as_table();
}

const toml::node& TomlReader::required(const toml::table& t, std::string_view key,
                                       std::string_view name) const {
  const toml::node* n = t.get(key);
  if (!n) fail(at(t), "missing key '{}'", name);
  return *n;
}

std::string TomlReader::string(const toml::node& n, std::string_view name) const {
  if (!n.is_string()) fail(at(n), "'{}' must be a string, not {}", name, toml_type_name(n));
  return n.as_string()->get();
}

std::int64_t TomlReader::integer(const toml::node& n, std::string_view name, std::int64_t lo,
                                 std::int64_t hi) const {
  if (!n.is_integer()) fail(at(n), "'{}' must be an integer, not {}", name, toml_type_name(n));
  std::int64_t v = n.as_integer()->get();
  if (v < lo && hi == kNoLimit) fail(at(n), "'{}' must be at least {}, got {}", name, lo, v);
  if (v < lo || v > hi) fail(at(n), "'{}' must be between {} and {}, got {}", name, lo, hi, v);
  return v;
}

double TomlReader::number(const toml::node& n, std::string_view name, double lo, double hi) const {
  if (!n.is_number()) fail(at(n), "'{}' must be a number, not {}", name, toml_type_name(n));
  double v =
      n.is_integer() ? static_cast<double>(n.as_integer()->get()) : n.as_floating_point()->get();
  if (!(v >= lo && v <= hi)) fail(at(n), "'{}' must be between {} and {}, got {}", name, lo, hi, v);
  return v;
}

bool TomlReader::boolean(const toml::node& n, std::string_view name) const {
  if (!n.is_boolean()) fail(at(n), "'{}' must be true or false, not {}", name, toml_type_name(n));
  return n.as_boolean()->get();
}

const toml::array& TomlReader::list(const toml::node& n, std::string_view name,
                                    std::string_view example) const {
  if (!n.is_array())
    fail(at(n), "'{}' must be a list, like {} = {}, not {}", name, name, example,
         toml_type_name(n));
  if (n.as_array()->empty())
    fail(at(n), "'{}' is empty; give at least one, like {} = {}", name, name, example);
  return *n.as_array();
}

}  // namespace ts

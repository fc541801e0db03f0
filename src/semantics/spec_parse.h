// Internal: parsing one op table of a spec file (shared by ops.toml and isa.toml loaders).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tilesweep/base/suggest.h"
#include "tilesweep/base/toml_reader.h"
#include "tilesweep/semantics/op_spec.h"

namespace ts::sem {

// Parses `[op.NAME]` / `[instr.NAME]` into an OpSpec; keys outside the op format and
// `extra_keys` are errors with file and line.
OpSpec parse_op(const std::string& name, const toml::table& t, const std::string& file,
                const SourceLoc& loc, const std::set<std::string>& extra_keys);

// Parses a spec file; a TOML syntax error is a UserError at its file, line and column.
inline toml::table parse_spec_toml(std::string_view text, const std::string& file) {
  return TomlReader(file).parse(text);
}

inline SourceLoc toml_loc(const toml::node& n, const std::string& file) {
  return TomlReader(file).at(n);
}

// "; did you mean 'x'?" for an unknown key close to one of `keys`, else "".
inline std::string key_hint(std::string_view key, const std::set<std::string>& keys) {
  return did_you_mean(std::string(key), std::vector<std::string>(keys.begin(), keys.end()));
}

}  // namespace ts::sem

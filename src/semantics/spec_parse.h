// Internal: parsing one op table of a spec file (shared by ops.toml and isa.toml loaders).
#pragma once

#include <toml++/toml.h>

#include <set>
#include <string>

#include "tilesweep/semantics/op_spec.h"

namespace ts::sem {

// Parses `[op.NAME]` / `[instr.NAME]` into an OpSpec; keys outside the op format and
// `extra_keys` are errors with file and line.
OpSpec parse_op(const std::string& name, const toml::table& t, const std::string& file, const SourceLoc& loc,
                const std::set<std::string>& extra_keys);

// Parses a spec file; a TOML syntax error is a UserError at its file, line and column.
toml::table parse_spec_toml(std::string_view text, const std::string& file);

inline SourceLoc toml_loc(const toml::node& n, const std::string& file) {
  return SourceLoc{file, static_cast<int>(n.source().begin.line), static_cast<int>(n.source().begin.column)};
}

}  // namespace ts::sem

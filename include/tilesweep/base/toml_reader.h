// Reading TOML input files (jobs, targets, op and instruction specs) with errors people can act
// on: every error is a UserError at file:line:col of the offending key or value that says what is
// wrong and how to fix it — the type expected and the one found, the allowed range, the closest
// known key for an unknown one.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "tilesweep/base/error.h"

namespace ts {

// "an integer", "a list", "a table", ... for messages.
const char* toml_type_name(const toml::node& n);

class TomlReader {
 public:
  static constexpr std::int64_t kNoLimit = std::numeric_limits<std::int64_t>::max();

  explicit TomlReader(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }

  // The document; a syntax error is a UserError at its line and column.
  toml::table parse(std::string_view text) const;

  // Where a node, key or region starts; the root table (no position) is the first line.
  SourceLoc at(const toml::source_region& r) const;
  SourceLoc at(const toml::node& n) const { return at(n.source()); }
  SourceLoc at(const toml::key& k) const { return at(k.source()); }

  // Every key of `t` must be one of `keys`: else "unknown key 'k' in WHERE; did you mean 'x'?"
  // (or the list of its keys). `where` names the table: "the job", "[search]".
  void check_keys(const toml::table& t, const std::vector<std::string>& keys,
                  std::string_view where) const;

  // The sub-table `key` of `t`, or null when absent; an error when it is no table.
  const toml::table* table(const toml::table& t, std::string_view key) const;
  // The table at dotted `path` ("engine.tensor") of `doc`: "missing table [path]" when absent.
  const toml::table& section(const toml::table& doc, std::string_view path) const;
  // Key `key` of `t`: "missing key 'NAME'" (at the table) when absent.
  const toml::node& required(const toml::table& t, std::string_view key,
                             std::string_view name) const;

  // Typed values; `name` names the value in messages ("seed", "chip.neuron_cores").
  std::string string(const toml::node& n, std::string_view name) const;
  std::int64_t integer(const toml::node& n, std::string_view name, std::int64_t lo,
                       std::int64_t hi = kNoLimit) const;
  double number(const toml::node& n, std::string_view name, double lo,
                double hi) const;  // integer or float
  bool boolean(const toml::node& n, std::string_view name) const;
  // A non-empty list; `example` shows what one looks like ("[\"trn2\"]").
  const toml::array& list(const toml::node& n, std::string_view name,
                          std::string_view example) const;

 private:
  std::string file_;
};

}  // namespace ts

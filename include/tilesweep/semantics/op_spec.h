// Op semantics loaded from spec files (src/semantics/ops.toml, user `--ops` files): for each op,
// its operands and attributes, the shape pattern of each operand (rank/shape preconditions and
// access maps), the output pattern, the contracting dims and the element expression. The shape
// checker, the interpreter and the Z3 encoder all derive from this one description.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tilesweep/semantics/attr.h"
#include "tilesweep/semantics/expr.h"

namespace ts::sem {

struct AttrSpec {
  std::string name;
  AttrType type = AttrType::Int;
  std::string of;  // Axis/Axes: the operand whose rank they index
  std::optional<AttrValue> default_value;
  bool default_reversed = false;     // Axes: default is the reversed axes
  std::vector<std::string> choices;  // Name: the allowed names
};

struct OpSpec {
  std::string name;
  std::string doc;
  std::vector<std::string> operands;
  std::vector<AttrSpec> attrs;
  std::vector<std::string> args;       // positional order of operands and attributes
  std::vector<Pattern> shapes;         // one per operand
  std::vector<std::string> broadcast;  // groups that broadcast NumPy-style across operands
  Pattern out;
  std::vector<std::string> contract;  // dims summed/reduced away (not in the output)
  std::vector<Item> requirements;     // extra shape preconditions
  ExprPtr expr;
  bool fold = false;  // a binary op that also takes a tuple, folded left
  // The op computing one chunk of this one along its axis from the state the previous chunk
  // ended in (`chunk` key; its operands, then that state); empty when it does not chunk.
  std::string chunk;
  // The result's dtype (`dtype` key): the promotion of the dtypes of `dtype_from` (default: every
  // operand), a fixed dtype name (`dtype = "f32"`), or `cast(attr)`: the dtype an attribute names,
  // the values rounded to it.
  std::vector<std::string> dtype_from;
  std::string dtype_fixed;
  std::string dtype_cast;
  SourceLoc loc;

  const AttrSpec* attr(std::string_view n) const;
  int operand_index(std::string_view n) const;
};

// A set of ops by name. Values in, values out; thread-safe for concurrent reads.
class OpTable {
 public:
  // The ops of src/semantics/ops.toml, embedded in the binary.
  static const OpTable& builtin();

  // Adds the ops of a spec file; an op already present, or any malformed entry, is a UserError
  // with file and line.
  void load(std::string_view toml_text, const std::string& file_name);

  const OpSpec* find(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, OpSpec, std::less<>> ops_;
};

}  // namespace ts::sem

// ISA instructions loaded from a target's isa.toml: the semantics in the op format (so the
// interpreter and the Z3 encoder treat instructions and ops alike) plus the hardware facts —
// the engines it may run on, the memories of each operand, tile-size limits and the cost
// formula in the engine's cycles.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tilesweep/semantics/op_spec.h"

namespace ts::sem {

enum class Engine { Tensor, Vector, Scalar, GpSimd, Dma };
enum class Memory { Sbuf, Psum, Hbm };

const char* engine_name(Engine e);
const char* memory_name(Memory m);

struct InstrSpec {
  OpSpec op;  // semantics (its name is the instruction's)
  std::vector<Engine> engines;
  std::map<std::string, std::vector<Memory>> memory;  // per operand, and "out"
  std::map<std::string, std::int64_t> limits;         // max size per pattern dim
  // The same facts by position, derived at load (candidates are built from them by the
  // million; no name lookups there): each operand's memories (empty: any) and the output's,
  // and the limit of each item of each operand's pattern and of the output's (0: none).
  std::vector<std::vector<Memory>> operand_memory;
  std::vector<Memory> out_memory;
  std::vector<std::vector<std::int64_t>> operand_limits;
  std::vector<std::int64_t> out_limits;
  // The named scalar dims of the operands' and the output's patterns, each once, in order of
  // first appearance (operands first), and the slot of each pattern item in that list (-1: a
  // group or an unnamed item): the cost variables are filled by slot, not looked up by name.
  std::vector<std::string> dim_names;
  std::vector<std::vector<int>> operand_dim_slots;
  std::vector<int> out_dim_slots;
  // Per operand: true when each output element reads only the same element of it (its pattern
  // is the output's, nothing is contracted, and the expression reads it only bare, never at
  // other indices): an instruction may then write its result over that operand in place.
  std::vector<bool> elementwise_operand;
  ExprPtr cost;        // engine cycles
  std::string source;  // where the facts come from
  // The NKI call that runs it (optional; placeholder syntax in the isa.toml headers): `nki` in
  // the legacy value-returning neuronxcc.nki API (Neuron SDK <= 2.26), `nki_current` in the
  // nki API of 2.27+ (every call takes dst= and returns nothing). And the NKI spelling of each
  // name the templates can receive: name-attribute choices and engines, from the file's
  // [nki.names] / [nki.engines] tables (`sub` -> `nl.subtract`); the current API's engine
  // spellings ([nki.current_engines]) under "current:ENGINE".
  std::string nki, nki_current;
  std::map<std::string, std::string> nki_names;
  // isa.toml `elementwise` (optional): this instruction also writes, as a second result, what
  // instruction `elementwise` computes on the same operands and attributes (NKI's `dst` beside
  // `reduce_res`), and its own output is the reduction along the contracted free dim of that
  // result by `reduce_op` (add, mul, max or min), or by the value of its name attribute
  // `reduce_attr`. Validated at load: the same operands and patterns, every other attribute one of
  // the element-wise instruction's; tests/lower/reduction_fusion_test.cpp proves the identity with
  // Z3 for every choice. What lower/reduction_fusion.h fuses a pair of instructions into.
  std::string elementwise, reduce_op, reduce_attr;
  // The reducer of this instruction (with `elementwise`) under attributes `attrs` (reduce_op,
  // or the value of reduce_attr there, else its default); "" when it has none.
  std::string reducer(const AttrMap& attrs) const;
  int id = -1;  // its position in its InstrTable's load order (derived at load)
};

// Expands an `nki` template: each `{name}` becomes value(name), `{{` and `}}` are literal braces.
// A malformed template (an unclosed brace, a name that is not an identifier) returns "" and sets
// `error` to what is wrong.
std::string expand_nki(std::string_view tmpl,
                       const std::function<std::string(const std::string&)>& value,
                       std::string* error);

// Thread-safe for concurrent reads.
class InstrTable {
 public:
  // Adds the `[instr.NAME]` tables of an isa.toml; any malformed entry is a UserError with file
  // and line. `ops` resolves the functions instructions apply (activation functions, ALU ops).
  void load(std::string_view toml_text, const std::string& file_name, const OpTable& ops);

  const InstrSpec* find(std::string_view name) const;
  std::vector<std::string> names() const;
  // The instructions whose `elementwise` key names `name` (in name order).
  std::vector<const InstrSpec*> reducing_forms(std::string_view name) const;
  // A hash of every text loaded, in order: equal digests, equal tables (in any process).
  std::uint64_t digest() const { return digest_; }

 private:
  std::map<std::string, InstrSpec, std::less<>> instrs_;
  std::uint64_t digest_ = 0;
};

}  // namespace ts::sem

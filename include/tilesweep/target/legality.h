// Legality as data: what each engine of a target may do, from the [legality] tables of its
// isa.toml, each with its source key — the memories an engine reaches (GpSimd cannot access
// PSUM), the ALU operators it runs (the documented operator table, which has no divide), and
// requirements of one instruction on one engine (trn2's Scalar engine runs tensor_scalar as
// (mul, add), (mul) or (add) only). The lowering picks engines by these rules and rejects a
// program that breaks one (lower::check_legality).
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "tilesweep/semantics/attr.h"
#include "tilesweep/semantics/instr_spec.h"

namespace ts::target {

struct EngineRules {
  std::vector<sem::Memory> memory;  // the memories its operands and results may be in
  std::vector<std::string> alu;     // the ALU operators it runs
  std::string source;
};

// On `engine`, instruction `instr` with every attribute of `when` as given must have every
// attribute of `require` as given (an attribute at its default counts with that value).
struct AttrRequirement {
  std::string instr;
  sem::Engine engine = sem::Engine::Vector;
  sem::AttrMap when, require;
  std::string source;
};

// The rules above resolved for one instruction of the ISA on one engine (resolve_legality): what
// check_instruction still has to look at, so that candidates (built by the million) test bits and
// short lists instead of names.
struct ResolvedRules {
  unsigned memories = ~0u;  // bit m set: the engine reaches sem::Memory m
  struct Operator {
    std::string attr;                  // an ALU attribute of the instruction (op0, ...)
    std::vector<std::string> allowed;  // the engine's operators among the attribute's choices
  };
  std::vector<Operator> operators;
  std::vector<int> requirements;  // rows of Legality::requirements for this instr and engine
  bool reaches(sem::Memory m) const { return (memories >> static_cast<unsigned>(m) & 1u) != 0; }
};

struct Legality {
  std::map<sem::Engine, EngineRules> engines;  // an engine not listed has no restriction
  std::vector<std::string> alu_attributes;     // attribute names holding an ALU operator (op0, ...)
  std::vector<AttrRequirement> requirements;
  // By InstrSpec::id, then engine; each entry names the spec it was resolved for (a spec of
  // another table, or of a copy, is checked from the rules above).
  struct Resolved {
    const sem::InstrSpec* spec = nullptr;
    std::vector<ResolvedRules> by_engine;  // indexed by sem::Engine
  };
  std::vector<Resolved> resolved;
};

// Fills l.resolved for every instruction of `isa` (the target's own table; done once at load).
void resolve_legality(Legality& l, const sem::InstrTable& isa);

// The resolved rules of `in` on `engine`; null when `in` is not of the table l was resolved for.
const ResolvedRules* resolved_rules(const Legality& l, const sem::InstrSpec& in,
                                    sem::Engine engine);

enum class Rule { None, Memory, Operator, Requirement };
const char* rule_name(Rule r);  // "none", "memory", "operator", "requirement"

struct Breach {
  Rule rule = Rule::None;
  std::string why;  // e.g. "gpsimd cannot access psum (operand 0)"; empty when legal
  explicit operator bool() const { return rule != Rule::None; }
};

// What `in` on `engine` breaks, if anything: the operands' memories (in operand order), the
// result's (`out`, or null for a DMA store) and the instruction's attributes.
Breach check_instruction(const Legality& l, const sem::InstrSpec& in, sem::Engine engine,
                         std::span<const sem::Memory> operands, const sem::Memory* out,
                         const sem::AttrMap& attrs);
// check_instruction's answer without the message: true when nothing is broken (for trying
// engines, where a breach is common and its text unused).
bool keeps_rules(const Legality& l, const sem::InstrSpec& in, sem::Engine engine,
                 std::span<const sem::Memory> operands, const sem::Memory* out,
                 const sem::AttrMap& attrs);

// Reads the [legality] tables of an isa.toml text; a malformed table is a UserError with the
// file and line. No [legality] table: no rules.
Legality parse_legality(const std::string& isa_text, const std::string& isa_file);

}  // namespace ts::target

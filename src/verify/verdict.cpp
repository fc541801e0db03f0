#include "tilesweep/verify/verdict.h"

#include <fmt/format.h>

namespace ts::verify {

const char* verdict_name(VerdictKind k) {
  switch (k) {
    case VerdictKind::Equivalent:
      return "equivalent";
    case VerdictKind::NotEquivalent:
      return "not equivalent";
    case VerdictKind::Unknown:
      return "unknown";
  }
  return "?";
}

std::string Counterexample::str() const {
  std::string d;
  for (const auto& [k, v] : dims) d += (d.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  if (!note.empty()) return fmt::format("{} at {}", note, d.empty() ? "any dims" : d);
  std::string i;
  for (auto x : index) i += (i.empty() ? "" : ", ") + std::to_string(x);
  return fmt::format("at {}: output {}[{}] is {:.9g} vs {:.9g}", d.empty() ? "no dims" : d, output,
                     i, lhs, rhs);
}

}  // namespace ts::verify

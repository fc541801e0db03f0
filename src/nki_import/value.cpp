#include "tilesweep/nki_import/value.h"

#include <map>

namespace ts::nki {

Affine operator+(const Affine& a, const Affine& b) {
  std::map<int, std::int64_t> sum;
  for (const auto& [blk, s] : a.terms) sum[blk] += s;
  for (const auto& [blk, s] : b.terms) sum[blk] += s;
  Affine r;
  r.c = a.c + b.c;
  for (const auto& [blk, s] : sum)
    if (s != 0) r.terms.push_back({blk, s});
  return r;
}

Affine operator*(const Affine& a, std::int64_t k) {
  Affine r;
  r.c = a.c * k;
  if (k == 0) return r;
  for (const auto& [blk, s] : a.terms) r.terms.push_back({blk, s * k});
  return r;
}

std::string describe(const Value& v) {
  using K = Value::Kind;
  switch (v.kind) {
    case K::None:
      return "None";
    case K::Bool:
      return "a bool";
    case K::Int:
      return v.a.constant() ? fmt::format("the integer {}", v.a.c)
                            : "an integer that depends on a loop variable";
    case K::Float:
      return fmt::format("the number {}", v.f);
    case K::Str:
      return fmt::format("the string '{}'", v.s);
    case K::Tuple:
      return fmt::format("a tuple of {}", v.items.size());
    case K::Module:
      return fmt::format("'{}'", v.s);
    case K::DType:
      return fmt::format("the dtype {}", ir::dtype_name(v.dtype));
    case K::Index:
      return "an index (nl.arange / nl.mgrid)";
    case K::Slice:
      return "a slice";
    case K::Ellipsis:
      return "...";
    case K::Array:
      return "an array";
    case K::View:
      return "a subscripted array";
    case K::Mask:
      return "a mask";
    case K::ParDim:
      return "nl.par_dim";
    case K::Func:
      return fmt::format("the function {}", v.s);
    case K::Range:
      return "a loop range";
  }
  return "a value";
}

}  // namespace ts::nki

#include "tilesweep/ir/dtype.h"

namespace ts::ir {

std::optional<DType> parse_dtype(std::string_view name) {
  if (name == "f32") return DType::F32;
  if (name == "bf16") return DType::BF16;
  if (name == "f16") return DType::F16;
  if (name == "f8") return DType::F8;
  return std::nullopt;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F8:
      return "f8";
    case DType::BF16:
      return "bf16";
    case DType::F16:
      return "f16";
    case DType::F32:
      return "f32";
  }
  return "?";
}

int dtype_bytes(DType t) {
  switch (t) {
    case DType::F8:
      return 1;
    case DType::BF16:
    case DType::F16:
      return 2;
    case DType::F32:
      return 4;
  }
  return 4;
}

DType promote(DType a, DType b) {
  if (a == b) return a;
  if ((a == DType::BF16 && b == DType::F16) || (a == DType::F16 && b == DType::BF16))
    return DType::F32;
  return a > b ? a : b;
}

}  // namespace ts::ir

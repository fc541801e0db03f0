#include "tilesweep/ir/dtype.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

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

double round_f32(double v) { return static_cast<double>(static_cast<float>(v)); }

double round_bf16(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(f)) return v;
  // Keep the upper 16 bits of the float32, rounding on the lower 16: add 0x7FFF plus the lowest
  // kept bit (so a tie goes to the even neighbour); a carry into the exponent is the correct
  // next binade, or inf past the largest finite bf16.
  auto bits = std::bit_cast<std::uint32_t>(f);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<double>(std::bit_cast<float>(bits & 0xFFFF0000u));
}

namespace {

// Round to nearest even with `fraction_bits` bits after the leading one, normals from 2^min_exp,
// subnormals below, an infinity past `largest`.
double round_binary(double v, int fraction_bits, int min_exp, double largest) {
  if (!std::isfinite(v) || v == 0) return v;
  int e = 0;
  std::frexp(v, &e);  // |v| in [2^(e-1), 2^e)
  int lead = std::max(e - 1, min_exp);
  double ulp = std::ldexp(1.0, lead - fraction_bits);
  double r = std::nearbyint(v / ulp) * ulp;
  if (std::fabs(r) > largest) return std::copysign(HUGE_VAL, v);
  return r;
}

}  // namespace

double round_to(DType t, double v) {
  switch (t) {
    case DType::F32:
      return round_f32(v);
    case DType::BF16:
      return round_bf16(v);
    case DType::F16:
      return round_binary(v, 10, -14, 65504.0);
    case DType::F8:
      return round_binary(v, 3, -6, 448.0);
  }
  return v;
}

}  // namespace ts::ir

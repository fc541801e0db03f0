// Element types of the kernel language.
#pragma once

#include <optional>
#include <string_view>

namespace ts::ir {

enum class DType { F8, BF16, F16, F32 };

std::optional<DType> parse_dtype(std::string_view name);
const char* dtype_name(DType t);
int dtype_bytes(DType t);
// NumPy-style promotion: the wider type; bf16 with f16 gives f32.
DType promote(DType a, DType b);

// `v` rounded to the nearest float32 (ties to even), as a double.
double round_f32(double v);
// `v` rounded to float32 and then to the nearest bfloat16 (8 significant bits, ties to even), as
// a double: what an engine that computes in fp32 writes to a bf16 tile. NaN stays NaN (whatever
// its payload), a finite value past the bf16 range becomes +-inf, bf16 subnormals are kept.
double round_bf16(double v);
// `v` as a value of dtype `t` (a cast, rounded to nearest even): round_f32, round_bf16, IEEE half
// (10 fraction bits, subnormals, past 65504 an infinity), and f8 taken as e4m3 (NKI's
// float8_e4m3: 3 fraction bits, smallest normal 2^-6, largest finite 448; past it an infinity).
double round_to(DType t, double v);

}  // namespace ts::ir

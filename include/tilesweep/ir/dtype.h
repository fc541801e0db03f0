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

}  // namespace ts::ir

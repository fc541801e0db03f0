// NumPy .npy files (format version 1.0 written; 1.0-3.0 read): little-endian float32 (`<f4`)
// or float64 (`<f8`), C order, any rank including 0-d scalars.
#pragma once

#include <string>

#include "tilesweep/ir/tensor.h"

namespace ts::ir {

enum class NpyType { F32, F64 };

// Throws UserError naming the file when it is missing, not an .npy file, truncated, Fortran
// ordered, or of a dtype other than <f4/<f8.
Tensor read_npy(const std::string& path);

// Throws UserError when the file cannot be written.
void write_npy(const std::string& path, const Tensor& t, NpyType type);

}  // namespace ts::ir

// A dense, row-major tensor of doubles: the reference interpreter's values and .npy contents.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ts::ir {

struct Tensor {
  std::vector<std::int64_t> shape;  // empty for a 0-d (scalar) tensor
  std::vector<double> data;

  Tensor() : data(1, 0.0) {}
  explicit Tensor(std::vector<std::int64_t> s);

  std::int64_t size() const { return static_cast<std::int64_t>(data.size()); }
  std::string shape_str() const;
};

// Number of elements of a shape (1 for 0-d).
std::int64_t numel(const std::vector<std::int64_t>& shape);

}  // namespace ts::ir

#include "tilesweep/ir/tensor.h"

namespace ts::ir {

std::int64_t numel(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

Tensor::Tensor(std::vector<std::int64_t> s)
    : shape(std::move(s)), data(static_cast<std::size_t>(numel(shape)), 0.0) {}

std::string Tensor::shape_str() const {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace ts::ir

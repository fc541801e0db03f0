// A kernel (or one of its ops) has no program form yet; the reason says which op and why. Thrown
// by the lowering stage (tile forms, fusion, materialization) and caught where a candidate or a
// section is given up.
#pragma once

#include <stdexcept>
#include <string>

namespace ts::lower {

struct Unsupported : std::runtime_error {
  explicit Unsupported(const std::string& what, int node = -1) : std::runtime_error(what), node(node) {}
  int node;  // the kernel node whose lowering does not fit, when it is one op's
};

}  // namespace ts::lower

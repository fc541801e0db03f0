// A kernel (or one of its ops) has no program form yet, as an exception: what Lowered::value()
// throws for a caller to whom a missing program is an error (printing a candidate, checking one
// against the interpreter). The lowering stage itself returns NoProgram values (lowered.h).
#pragma once

#include <stdexcept>
#include <string>

namespace ts::lower {

struct Unsupported : std::runtime_error {
  explicit Unsupported(const std::string& what, int node = -1)
      : std::runtime_error(what), node(node) {}
  int node;  // the kernel node whose lowering does not fit, when it is one op's
};

}  // namespace ts::lower

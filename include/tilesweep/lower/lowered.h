// "No program" as a value: what a lowering step returns when a kernel (or one of its ops) has no
// program form yet, with the reason, instead of throwing. The materialization passes, the
// candidate space's stages and the cursor pass it on; a scored candidate without a program
// records the reason. value() throws Unsupported, for callers to whom a missing program is an
// error (like std::expected's value()).
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "tilesweep/lower/unsupported.h"

namespace ts::lower {

struct NoProgram {
  std::string reason;
  int node = -1;  // the kernel node whose lowering does not fit, when it is one op's
};

// A T, or the NoProgram that says why there is none.
template <class T>
class Lowered {
 public:
  Lowered(T value) : v_(std::move(value)) {}      // NOLINT: implicit, like std::expected
  Lowered(NoProgram why) : v_(std::move(why)) {}  // NOLINT
  explicit operator bool() const { return v_.index() == 0; }
  // The value; only where there is one (checked by operator bool), like std::optional's.
  T& operator*() { return *std::get_if<0>(&v_); }
  const T& operator*() const { return *std::get_if<0>(&v_); }
  T* operator->() { return std::get_if<0>(&v_); }
  const T* operator->() const { return std::get_if<0>(&v_); }
  const NoProgram& no_program() const { return std::get<1>(v_); }
  T& value() & { return check(), std::get<0>(v_); }
  const T& value() const& { return check(), std::get<0>(v_); }
  T&& value() && { return check(), std::get<0>(std::move(v_)); }

 private:
  void check() const {
    if (v_.index() != 0) throw Unsupported(no_program().reason, no_program().node);
  }
  std::variant<T, NoProgram> v_;
};

}  // namespace ts::lower

// The values an NKI kernel computes with while it is translated: Python constants, integers that
// depend on loop iterations (affine in the loop variables), index grids (nl.arange, nl.mgrid,
// slices), masks, arrays (HBM tensors and on-chip tiles) and views of them (subscripts).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tilesweep/base/error.h"
#include "tilesweep/ir/dtype.h"
#include "tilesweep/lower/program.h"

namespace ts::nki {

// c + sum over (block b, coef s) of iter(b) * s: an integer that depends on loop iterations.
struct Affine {
  std::int64_t c = 0;
  lower::Terms terms;

  bool constant() const { return terms.empty(); }
};
Affine operator+(const Affine& a, const Affine& b);
Affine operator*(const Affine& a, std::int64_t k);
inline Affine operator-(const Affine& a, const Affine& b) { return a + b * -1; }

// One array index: base + coef * i, i in [0, size) along axis `axis` of an index grid of `ndim`
// axes (nl.arange(n)[:, None] is axis 0 of 2). axis -1: a scalar index (base alone).
struct Index {
  Affine base;
  int axis = -1, ndim = 0;
  std::int64_t size = 1, coef = 0;
};

// A mask term: `lhs op 0` (lhs = left - right of the comparison as written).
struct Cond {
  Index lhs;
  std::string op;  // < <= > >= == !=
  SourceLoc loc;
};

struct Value {
  enum class Kind {
    None,
    Bool,
    Int,
    Float,
    Str,
    Tuple,
    Module,
    DType,
    Index,
    Slice,
    Ellipsis,
    Array,
    View,
    Mask,
    ParDim,
    Func,
    Range
  };
  Kind kind = Kind::None;
  Affine a;        // Int (loop-dependent or not), ParDim; Range: start
  double f = 0;    // Float
  bool b = false;  // Bool
  std::string s;   // Str; Module: canonical path ("language.exp"); Func: name; Range: kind
  std::vector<Value> items;  // Tuple; View: the index items; Slice: start, stop, step (None or Int)
  Index idx;                 // Index
  int array = -1;            // Array, View
  std::vector<Cond> mask;    // Mask
  ir::DType dtype = ir::DType::F32;  // DType
  std::int64_t trips = 0, step = 1;  // Range

  static Value none() { return Value{}; }
  static Value integer(Affine x) {
    Value v;
    v.kind = Kind::Int;
    v.a = std::move(x);
    return v;
  }
  static Value integer(std::int64_t x) { return integer(Affine{x, {}}); }
  static Value real(double x) {
    Value v;
    v.kind = Kind::Float;
    v.f = x;
    return v;
  }
  static Value boolean(bool x) {
    Value v;
    v.kind = Kind::Bool;
    v.b = x;
    return v;
  }
  static Value module(std::string path) {
    Value v;
    v.kind = Kind::Module;
    v.s = std::move(path);
    return v;
  }
  static Value tuple(std::vector<Value> items) {
    Value v;
    v.kind = Kind::Tuple;
    v.items = std::move(items);
    return v;
  }
  static Value of_array(int id) {
    Value v;
    v.kind = Kind::Array;
    v.array = id;
    return v;
  }
  bool is_const_int() const { return kind == Kind::Int && a.constant(); }
  bool is_number() const { return kind == Kind::Bool || is_const_int() || kind == Kind::Float; }
  double number() const {
    return kind == Kind::Float ? f : kind == Kind::Bool ? (b ? 1 : 0) : static_cast<double>(a.c);
  }
  bool tensor() const { return kind == Kind::Array || kind == Kind::View; }
};

// What a value is, in words, for error messages ("an on-chip tile", "a loop-dependent integer").
std::string describe(const Value& v);

}  // namespace ts::nki

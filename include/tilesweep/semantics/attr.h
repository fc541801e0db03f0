// Attribute values of op instances (axis, keepdims, shape, ...).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "tilesweep/semantics/dim.h"

namespace ts::sem {

// Name: one of a list of names given by the spec (an activation function, an ALU op).
enum class AttrType { Bool, Int, Float, Dim, Dims, Axis, Axes, Name };

// As written by the user: bool, int, float, a dim expression or a tuple of them, or a name.
using AttrValue = std::variant<bool, std::int64_t, double, Dim, std::vector<Dim>, std::string>;
using AttrMap = std::map<std::string, AttrValue>;

std::string to_string(AttrType t);
std::string to_string(const AttrValue& v);

}  // namespace ts::sem

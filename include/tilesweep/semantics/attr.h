// Attribute values of op instances (axis, keepdims, shape, ...).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "tilesweep/semantics/dim.h"

namespace ts::sem {

enum class AttrType { Bool, Int, Float, Dim, Dims, Axis, Axes };

// As written by the user: bool, int, float, a dim expression or a tuple of them.
using AttrValue = std::variant<bool, std::int64_t, double, Dim, std::vector<Dim>>;
using AttrMap = std::map<std::string, AttrValue>;

std::string to_string(AttrType t);
std::string to_string(const AttrValue& v);

}  // namespace ts::sem

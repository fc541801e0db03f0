#include "tilesweep/semantics/attr.h"

#include <fmt/format.h>

namespace ts::sem {

std::string to_string(AttrType t) {
  switch (t) {
    case AttrType::Bool:
      return "bool";
    case AttrType::Int:
      return "int";
    case AttrType::Float:
      return "float";
    case AttrType::Dim:
      return "dim";
    case AttrType::Dims:
      return "dims";
    case AttrType::Axis:
      return "axis";
    case AttrType::Axes:
      return "axes";
    case AttrType::Name:
      return "name";
  }
  return "?";
}

std::string to_string(const AttrValue& v) {
  struct Visitor {
    std::string operator()(bool b) const { return b ? "True" : "False"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return fmt::format("{}", d); }
    std::string operator()(const Dim& d) const { return d.str(); }
    std::string operator()(const std::string& s) const { return "'" + s + "'"; }
    std::string operator()(const std::vector<Dim>& ds) const {
      std::string s = "(";
      for (std::size_t i = 0; i < ds.size(); ++i) s += (i ? ", " : "") + ds[i].str();
      return s + (ds.size() == 1 ? ",)" : ")");
    }
  };
  return std::visit(Visitor{}, v);
}

}  // namespace ts::sem

// The cost-formula variables of one instruction (pattern dims, P, N, MIN_II, fp32, bytes): a
// handful of name -> value pairs stored inline. Every materialized instruction carries one, and
// candidates are built by the million, so a node-based map here was a large share of the cost.
// Names are views: of the ISA's pattern names or of string literals, which outlive every
// Program built from them.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "tilesweep/base/error.h"

namespace ts::target {

class CostVars {
 public:
  using Item = std::pair<std::string_view, double>;
  static constexpr std::size_t kMax = 12;

  CostVars() = default;
  CostVars(std::initializer_list<Item> items) {
    for (const auto& [name, value] : items) set(name, value);
  }

  const double* find(std::string_view name) const {
    for (std::size_t i = 0; i < size_; ++i)
      if (same(items_[i].first, name)) return &items_[i].second;
    return nullptr;
  }
  // Assigns, adding the name when it is new.
  void set(std::string_view name, double value) {
    for (std::size_t i = 0; i < size_; ++i)
      if (same(items_[i].first, name)) {
        items_[i].second = value;
        return;
      }
    add(name, value);
  }
  // Adds a name the caller knows is not there yet (no search).
  void add_new(std::string_view name, double value) { add(name, value); }
  // Adds the name only when it is new (keeps an existing value).
  void set_default(std::string_view name, double value) {
    if (!find(name)) add(name, value);
  }

  std::size_t size() const { return size_; }
  const Item* begin() const { return items_.data(); }
  const Item* end() const { return items_.data() + size_; }

 private:
  // Names are short ("P", "N", "MIN_II"): compared inline, without a call to memcmp.
  static bool same(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)  // inline: a call to memcmp costs more
      if (a[i] != b[i]) return false;
    return true;
  }
  void add(std::string_view name, double value) {
    TS_CHECK(size_ < kMax, "instruction has more than {} cost variables", kMax);
    items_[size_++] = {name, value};
  }

  std::array<Item, kMax> items_{};
  std::size_t size_ = 0;
};

}  // namespace ts::target

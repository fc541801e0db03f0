#include "tilesweep/mesh/layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace ts::mesh {

Layout Layout::replicated(int rank) {
  Layout l;
  l.dims.resize(rank);
  return l;
}

int Layout::dim_of_axis(int axis) const {
  for (int d = 0; d < rank(); ++d)
    if (std::find(dims[d].begin(), dims[d].end(), axis) != dims[d].end()) return d;
  return -1;
}

std::int64_t Layout::split(int d, const MeshShape& mesh) const {
  std::int64_t s = 1;
  for (int a : dims.at(d)) s *= mesh.sizes.at(a);
  return s;
}

int Layout::replicas(const MeshShape& mesh) const {
  int r = 1;
  for (int a = 0; a < mesh.rank(); ++a) {
    bool used = dim_of_axis(a) >= 0 || offset.count(a) ||
                std::find(partial.begin(), partial.end(), a) != partial.end();
    if (!used) r *= mesh.sizes[a];
  }
  return r;
}

namespace {

std::string axes_text(const std::vector<int>& axes) {
  std::string s;
  for (int a : axes) s += (s.empty() ? "" : "*") + MeshShape::axis_name(a);
  return s;
}

// A small cursor over the layout text; every failure names the whole text.
class LayoutParser {
 public:
  LayoutParser(std::string_view text, const MeshShape& mesh, const SourceLoc& loc)
      : text_(text), mesh_(mesh), loc_(loc) {}

  Layout parse(int rank) {
    while (pos_ < text_.size() && (text_[pos_] == 'R' || text_[pos_] == 'S')) {
      char c = text_[pos_++];
      layout_.dims.push_back(c == 'R' ? std::vector<int>{} : axis_list('*'));
      for (int a : layout_.dims.back()) use(a);
    }
    while (skip_spaces()) {
      char c = text_[pos_++];
      if (c == 'P') {
        for (int a : axis_list(',')) use(a), layout_.partial.push_back(a);
      } else if (c == 'O') {
        offsets();
      } else {
        bad(fmt::format("unexpected '{}'", c));
      }
    }
    if (rank >= 0 && layout_.rank() != rank)
      bad(fmt::format("it has {} dims, the tensor {}", layout_.rank(), rank));
    return layout_;
  }

 private:
  [[noreturn]] void bad(const std::string& why) const {
    fail(loc_,
         "bad layout '{}' on mesh {}: {}; write R or S(axes) per dim, then optional P(axes) and "
         "O(axis=coord), as in \"S(x)R\"",
         text_, mesh_.str(), why);
  }
  bool skip_spaces() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
    return pos_ < text_.size();
  }
  void expect(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) bad(fmt::format("expected '{}'", c));
    ++pos_;
  }
  int axis() {
    std::size_t start = pos_;
    while (pos_ < text_.size() && std::isalpha(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    std::string_view name = text_.substr(start, pos_ - start);
    int a = mesh_.axis_index(name);
    if (a < 0) bad(fmt::format("'{}' is not an axis of the mesh", name));
    return a;
  }
  std::vector<int> axis_list(char sep) {
    expect('(');
    std::vector<int> axes{axis()};
    while (pos_ < text_.size() && text_[pos_] == sep) ++pos_, axes.push_back(axis());
    expect(')');
    return axes;
  }
  void offsets() {
    expect('(');
    do {
      int a = axis();
      expect('=');
      int v = -1;
      auto [p, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), v);
      if (ec != std::errc() || v < 0 || v >= mesh_.sizes[a])
        bad(fmt::format("the offset on {} must be a coordinate from 0 to {}",
                        MeshShape::axis_name(a), mesh_.sizes[a] - 1));
      pos_ = p - text_.data();
      use(a);
      layout_.offset[a] = v;
    } while (pos_ < text_.size() && text_[pos_] == ',' && ++pos_);
    expect(')');
  }
  void use(int a) {
    if (std::find(used_.begin(), used_.end(), a) != used_.end())
      bad(fmt::format("axis {} is used twice", MeshShape::axis_name(a)));
    used_.push_back(a);
  }

  std::string_view text_;
  const MeshShape& mesh_;
  const SourceLoc& loc_;
  std::size_t pos_ = 0;
  Layout layout_;
  std::vector<int> used_;
};

}  // namespace

Layout parse_layout(std::string_view text, const MeshShape& mesh, int rank, const SourceLoc& loc) {
  return LayoutParser(text, mesh, loc).parse(rank);
}

std::string format_layout(const Layout& layout) {
  std::string s;
  for (const auto& axes : layout.dims) s += axes.empty() ? "R" : "S(" + axes_text(axes) + ")";
  if (!layout.partial.empty()) {
    std::string p;
    for (int a : layout.partial) p += (p.empty() ? "" : ",") + MeshShape::axis_name(a);
    s += " P(" + p + ")";
  }
  if (!layout.offset.empty()) {
    std::string o;
    for (auto [a, v] : layout.offset)
      o += fmt::format("{}{}={}", o.empty() ? "" : ",", MeshShape::axis_name(a), v);
    s += " O(" + o + ")";
  }
  return s;
}

std::optional<std::vector<std::int64_t>> local_shape(const std::vector<std::int64_t>& global,
                                                     const Layout& layout, const MeshShape& mesh) {
  TS_CHECK(static_cast<int>(global.size()) == layout.rank(),
           "a rank-{} shape under a rank-{} layout", global.size(), layout.rank());
  std::vector<std::int64_t> local(global.size());
  for (int d = 0; d < layout.rank(); ++d) {
    std::int64_t s = layout.split(d, mesh);
    if (global[d] % s != 0) return std::nullopt;
    local[d] = global[d] / s;
  }
  return local;
}

}  // namespace ts::mesh

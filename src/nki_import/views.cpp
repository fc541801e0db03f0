// Index grids, masks and views: what a subscript of an HBM tensor moves (a DMA's affine access)
// and which window of an on-chip buffer a subscript of a tile is.
#include <algorithm>

#include "translator.h"

namespace ts::nki {

namespace {

using K = Value::Kind;

Index as_index(const Value& v) {
  if (v.kind == K::Index) return v.idx;
  Index i;
  i.base = v.a;
  return i;
}

bool holds(const std::string& op, std::int64_t x) {
  if (op == "<") return x < 0;
  if (op == "<=") return x <= 0;
  if (op == ">") return x > 0;
  if (op == ">=") return x >= 0;
  if (op == "==") return x == 0;
  return x != 0;
}

// One subscript item of one dim: start, extent, stride and the grid axis it runs along (-1: a
// scalar index; kSlice: a slice, whose axis is given after all items are seen).
constexpr int kSlice = -3;
struct DimIndex {
  Affine start;
  std::int64_t extent = 1, stride = 1;
  int axis = -1;
  bool full = false;
};

}  // namespace

Value Translator::index_arith(const std::string& op, const Value& l, const Value& r,
                              const SourceLoc& loc) {
  if ((l.kind != K::Index && l.kind != K::Int) || (r.kind != K::Index && r.kind != K::Int))
    throw UserError(
        loc, fmt::format("'{}' between {} and {} is not supported", op, describe(l), describe(r)));
  Index a = as_index(l), b = as_index(r);
  Value v;
  v.kind = K::Index;
  if (op == "+" || op == "-") {
    std::int64_t sign = op == "+" ? 1 : -1;
    if (a.axis >= 0 && b.axis >= 0 && (a.axis != b.axis || a.size != b.size))
      throw UserError(
          loc, "an index that adds two grid axes is not supported (one nl.arange per index)");
    v.idx = a.axis >= 0 ? a : b;
    v.idx.base = a.base + b.base * sign;
    v.idx.coef = a.coef + b.coef * sign;
    if (a.axis < 0 && sign < 0) v.idx.coef = -b.coef;
    return v;
  }
  if (op == "*") {
    const Index& grid = a.axis >= 0 ? a : b;
    const Index& k = a.axis >= 0 ? b : a;
    if (k.axis >= 0 || !k.base.constant())
      throw UserError(loc, "an index may be multiplied by a constant only");
    v.idx = grid;
    v.idx.base = grid.base * k.base.c;
    v.idx.coef = grid.coef * k.base.c;
    return v;
  }
  throw UserError(
      loc,
      fmt::format("'{}' on an index grid is not supported (indices are affine: a * i + b)", op));
}

Value Translator::compare(const std::string& op, const Value& l, const Value& r,
                          const SourceLoc& loc) {
  Value diff = index_arith("-", l, r, loc);
  Value m;
  m.kind = K::Mask;
  m.mask.push_back(Cond{diff.idx, op, loc});
  return m;
}

std::pair<std::int64_t, std::int64_t> Translator::range_of(const Affine& a) const {
  std::int64_t lo = a.c, hi = a.c;
  for (const auto& [blk, s] : a.terms) {
    std::int64_t last = (builder_.program().blocks[static_cast<std::size_t>(blk)].trips - 1) * s;
    lo += std::min<std::int64_t>(0, last);
    hi += std::max<std::int64_t>(0, last);
  }
  return {lo, hi};
}

// How many leading grid positions a mask term keeps, of `size`; NeedConcrete when that varies
// with a loop variable.
std::int64_t Translator::clip(const Cond& c, std::int64_t size) {
  const Index& x = c.lhs;
  auto count = [&](std::int64_t base) {
    std::int64_t n = 0;
    bool ended = false;
    for (std::int64_t i = 0; i < (x.axis < 0 ? 1 : size); ++i) {
      bool ok = holds(c.op, base + x.coef * i);
      if (ok && ended)
        throw UserError(
            c.loc,
            "a mask that keeps a range not starting at the tile's first element is not supported");
      ended = ended || !ok;
      n += ok ? 1 : 0;
    }
    return x.axis < 0 ? (n ? size : 0) : n;
  };
  auto [lo, hi] = range_of(x.base);
  std::int64_t at_lo = count(lo), at_hi = count(hi);
  if (x.base.constant() || (at_lo == size && at_hi == size)) return at_lo;
  int inner = -1;
  for (const auto& t : x.base.terms) inner = std::max(inner, t.first);
  throw NeedConcrete{inner, c.loc, "the mask cuts the tile"};
}

std::vector<Value> Translator::expand_index(const Value& view, std::size_t rank,
                                            const SourceLoc& loc) const {
  Value full;
  full.kind = K::Slice;
  full.items = {Value::none(), Value::none(), Value::none()};
  std::vector<Value> items = view.kind == K::View ? view.items : std::vector<Value>{};
  auto ell = std::find_if(items.begin(), items.end(),
                          [](const Value& v) { return v.kind == K::Ellipsis; });
  if (ell != items.end()) {
    std::size_t fill = rank + 1 >= items.size() ? rank + 1 - items.size() : 0;
    ell = items.erase(ell);
    items.insert(ell, fill, full);
  }
  if (items.size() > rank)
    throw UserError(loc, fmt::format("shape error: {} indices for an array of {} dims ({})",
                                     items.size(), rank, arrays_[view.array].name));
  while (items.size() < rank) items.push_back(full);
  return items;
}

namespace {

DimIndex dim_index(const Value& v, std::int64_t size, const SourceLoc& loc) {
  DimIndex d;
  if (v.kind == K::Int) {
    d.start = v.a;
    d.full = size == 1 && v.a.constant() && v.a.c == 0;
  } else if (v.kind == K::Index) {
    d.start = v.idx.base;
    if (v.idx.axis >= 0) d.extent = v.idx.size, d.stride = v.idx.coef, d.axis = v.idx.axis;
    d.full =
        d.axis >= 0 && d.start.constant() && d.start.c == 0 && d.stride == 1 && d.extent == size;
  } else if (v.kind == K::Slice) {
    auto part = [&](const Value& x, std::int64_t dflt) -> Affine {
      if (x.kind == K::None) return Affine{dflt, {}};
      if (x.kind != K::Int)
        throw UserError(loc, fmt::format("a slice bound must be an integer, not {}", describe(x)));
      if (x.a.constant() && x.a.c < 0)
        throw UserError(loc, "negative slice bounds are not supported");
      return x.a;
    };
    Affine start = part(v.items[0], 0), stop = part(v.items[1], size);
    std::int64_t step = v.items[2].kind == K::None ? 1 : v.items[2].a.c;
    Affine len = stop - start;
    if (!len.constant() || step <= 0 || !v.items[2].a.constant())
      throw UserError(
          loc,
          "a slice's length must be known when the kernel is translated (start + constant : stop)");
    d.start = start;
    d.stride = step;
    d.extent = std::max<std::int64_t>(0, (len.c + step - 1) / step);
    d.axis = kSlice;
    d.full = start.constant() && start.c == 0 && step == 1 && d.extent == size;
  } else {
    throw UserError(loc, fmt::format("{} cannot index an array", describe(v)));
  }
  return d;
}

}  // namespace

HbmAccess Translator::hbm_access(const Value& view, const std::vector<Cond>& mask,
                                 const SourceLoc& loc) {
  const Array& arr = arrays_[view.array];
  if (arr.memory != sem::Memory::Hbm)
    throw UserError(loc, fmt::format("'{}' is an on-chip tile, not an HBM tensor", arr.name));
  std::vector<Value> items = expand_index(view, arr.shape.size(), loc);
  std::vector<DimIndex> dims;
  int grid = 0;
  for (std::size_t d = 0; d < items.size(); ++d) {
    dims.push_back(dim_index(items[d], arr.shape[d], loc));
    if (items[d].kind == K::Index && items[d].idx.axis >= 0)
      grid = std::max(grid, items[d].idx.ndim);
  }
  int axes = grid;
  for (DimIndex& d : dims)
    if (d.axis == kSlice) d.axis = axes++;
  std::vector<std::int64_t> size(static_cast<std::size_t>(std::max(axes, 1)), 1);
  std::vector<int> fed(size.size(), 0);
  for (const DimIndex& d : dims)
    if (d.axis >= 0) {
      if (fed[static_cast<std::size_t>(d.axis)]++)
        throw UserError(
            loc, "two dims of one access run along the same grid axis; that is not supported");
      size[static_cast<std::size_t>(d.axis)] = d.extent;
    }
  HbmAccess h;
  h.grid_parts = size[0];
  for (std::size_t a = 1; a < size.size(); ++a) h.grid_width *= size[a];
  for (const Cond& c : mask) {
    std::int64_t keep = clip(
        c, c.lhs.axis >= 0 && c.lhs.axis < static_cast<int>(size.size()) ? size[c.lhs.axis] : 1);
    if (c.lhs.axis < 0)
      h.empty = h.empty || keep == 0;
    else if (c.lhs.axis < static_cast<int>(size.size()) && keep < size[c.lhs.axis])
      size[c.lhs.axis] = keep, h.clipped = true;
  }
  h.parts = size[0];
  for (std::size_t a = 1; a < size.size(); ++a) {
    if (!fed[a] && size[a] > 1)
      throw UserError(loc,
                      "an access whose grid axis no dim runs along (a broadcast) is not supported");
    h.width *= size[a];
  }
  lower::Access& acc = h.access;
  acc.buffer = arr.buffer;
  int last_free = 0;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    DimIndex& x = dims[d];
    if (x.axis >= 0) x.extent = size[static_cast<std::size_t>(x.axis)];
    h.empty = h.empty || x.extent == 0;
    if (x.axis > 0 && x.axis < last_free)
      throw UserError(loc,
                      "the free axes of this access run in a different order than the tensor's "
                      "dims; not supported");
    if (x.axis > 0) last_free = x.axis;
    auto [lo, hi] = range_of(x.start);
    std::int64_t span = (x.extent - 1) * x.stride;
    if (x.extent > 0 && (std::min(lo, lo + span) < 0 || std::max(hi, hi + span) >= arr.shape[d]))
      throw UserError(
          loc,
          fmt::format("shape error: the index of '{}' dim {} reaches [{}, {}], outside its size {}",
                      arr.name, d, std::min(lo, lo + span), std::max(hi, hi + span), arr.shape[d]));
    acc.extent.push_back(x.extent);
    acc.terms.push_back(x.start.terms);
    acc.offset.push_back(x.start.c);
    acc.stride.push_back(x.stride);
    acc.tile_dim.push_back(x.axis < 0 ? -1 : x.axis == 0 ? 0 : 1);
  }
  return h;
}

Operand Translator::operand(const Value& v, const SourceLoc& loc) {
  if (!v.tensor()) throw UserError(loc, fmt::format("expected a tile, got {}", describe(v)));
  const Array& arr = arrays_[v.array];
  if (arr.memory == sem::Memory::Hbm)
    throw UserError(
        loc, fmt::format("'{}' is in HBM; instructions read on-chip tiles (nl.load it first)",
                         arr.name));
  std::vector<Value> items = expand_index(v, arr.shape.size(), loc);
  Operand op = whole(v.array);
  std::vector<DimIndex> free;
  std::vector<std::int64_t> sizes;
  for (std::size_t d = 0; d < items.size(); ++d) {
    DimIndex x = dim_index(items[d], arr.shape[d], loc);
    if (static_cast<int>(d) == arr.par) {
      if (!x.full)
        throw UserError(
            loc,
            fmt::format("'{}' is indexed on its partition dim other than as a whole; tilesweep's "
                        "tiles are whole-partition (use a separate tile)",
                        arr.name));
      continue;
    }
    if (x.axis >= 0 && x.stride != 1 && x.extent > 1)
      throw UserError(loc, "a strided index of an on-chip tile is not supported");
    free.push_back(x);
    sizes.push_back(arr.shape[d]);
  }
  std::int64_t total = op.width;
  int last = -1;
  for (std::size_t i = 0; i < free.size(); ++i)
    if (!free[i].full) last = static_cast<int>(i);
  if (last < 0) return op;
  Affine start;
  std::int64_t stride = total, width = free[static_cast<std::size_t>(last)].extent;
  for (std::size_t i = 0; i < free.size(); ++i) {
    stride /= sizes[i];
    if (static_cast<int>(i) < last && free[i].extent != 1)
      throw UserError(
          loc, fmt::format(
                   "this index of '{}' is not one contiguous range of its free dims; not supported",
                   arr.name));
    if (static_cast<int>(i) > last) width *= sizes[i];
    start = start + free[i].start * stride;
  }
  auto [lo, hi] = range_of(start);
  if (lo < 0 || hi + width > total)
    throw UserError(loc,
                    fmt::format("shape error: the index of '{}' reaches columns [{}, {}) of its {}",
                                arr.name, lo, hi + width, total));
  if (width == total) return op;
  op.win.terms = start.terms;
  op.win.offset = start.c;
  op.win.width = width;
  op.width = width;
  return op;
}

}  // namespace ts::nki

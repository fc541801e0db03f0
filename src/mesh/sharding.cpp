#include "tilesweep/mesh/sharding.h"

#include <algorithm>

#include "tilesweep/ir/dtype.h"

namespace ts::mesh {

namespace {

std::optional<std::string> bare_symbol(const sem::Dim& d) {
  std::vector<std::string> s = d.symbols();
  if (s.size() == 1 && d == sem::Dim::symbol(s[0])) return s[0];
  return std::nullopt;
}

std::int64_t elements(const std::vector<sem::Dim>& shape, const sem::DimEnv& env) {
  std::int64_t n = 1;
  for (const sem::Dim& d : shape) {
    std::optional<std::int64_t> v = d.evaluate(env);
    TS_CHECK(v.has_value(), "size {} with the dims given", d.str());
    n *= *v;
  }
  return n;
}

std::string choice_text(const std::vector<DimShard>& shards, bool rs) {
  if (shards.empty()) return "replicate";
  std::string s;
  for (const DimShard& d : shards) {
    s += (s.empty() ? "" : ",") + d.dim + ":";
    for (std::size_t i = 0; i < d.axes.size(); ++i)
      s += (i ? "*" : "") + MeshShape::axis_name(d.axes[i]);
  }
  return rs ? s + "+rs" : s;
}

}  // namespace

std::vector<int> ShardingChoice::axes_of(const std::string& dim) const {
  for (const DimShard& d : shards)
    if (d.dim == dim) return d.axes;
  return {};
}

std::optional<sem::DimEnv> ShardingChoice::local_dims(const sem::DimEnv& global) const {
  sem::DimEnv local = global;
  for (const DimShard& d : shards) {
    auto it = local.find(d.dim);
    if (it == local.end())
      fail({}, "the shape gives no size for dim '{}' (sharding '{}')", d.dim, text);
    std::int64_t split = 1;
    for (int a : d.axes) split *= mesh.sizes[a];
    if (it->second % split != 0) return std::nullopt;
    it->second /= split;
  }
  for (const sem::Precondition& p : preconditions)
    if (p.holds(local) == false) return std::nullopt;
  if (reduce_scatter)
    for (const Output& o : outputs) {
      if (o.reduce_axes.empty()) continue;
      if (o.shape.empty()) return std::nullopt;
      std::optional<std::int64_t> first = o.shape[0].evaluate(local);
      int group = 1;
      for (int a : o.reduce_axes) group *= mesh.sizes[a];
      if (!first || *first % group != 0) return std::nullopt;
    }
  return local;
}

std::vector<CollectiveUse> ShardingChoice::collectives(const sem::DimEnv& global) const {
  std::optional<sem::DimEnv> local = local_dims(global);
  TS_CHECK(local.has_value(), "sharding '{}' does not apply to this shape", text);
  std::vector<CollectiveUse> out;
  for (int i = 0; i < static_cast<int>(outputs.size()); ++i) {
    const Output& o = outputs[i];
    if (o.reduce_axes.empty()) continue;
    Collective kind = reduce_scatter ? Collective::ReduceScatter : Collective::AllReduce;
    out.push_back({kind, o.reduce_axes, elements(o.shape, *local) * o.dtype_bytes, i});
  }
  return out;
}

std::vector<Layout> ShardingChoice::output_layouts() const {
  std::vector<Layout> out;
  for (const Output& o : outputs) {
    Layout l = Layout::replicated(static_cast<int>(o.shape.size()));
    for (std::size_t d = 0; d < o.shape.size(); ++d)
      if (auto s = bare_symbol(o.shape[d]))
        for (const DimShard& sh : shards)
          if (sh.dim == *s && sh.role == DimRole::Parallel) l.dims[d] = sh.axes;
    if (reduce_scatter && !o.reduce_axes.empty())
      l.dims[0].insert(l.dims[0].end(), o.reduce_axes.begin(), o.reduce_axes.end());
    out.push_back(std::move(l));
  }
  return out;
}

std::vector<CollectiveUse> ShardingChoice::gathers(const sem::DimEnv& global) const {
  std::vector<Layout> layouts = output_layouts();
  std::vector<CollectiveUse> out;
  for (int i = 0; i < static_cast<int>(outputs.size()); ++i) {
    std::vector<int> axes;
    for (const auto& d : layouts[i].dims) axes.insert(axes.end(), d.begin(), d.end());
    if (axes.empty()) continue;
    std::sort(axes.begin(), axes.end());
    out.push_back({Collective::AllGather, axes,
                   elements(outputs[i].shape, global) * outputs[i].dtype_bytes, i});
  }
  return out;
}

std::vector<ShardingChoice> sharding_choices(const ir::Kernel& kernel, const MeshShape& mesh) {
  std::vector<DimInfo> offered;
  for (DimInfo& d : classify_dims(kernel))
    if (d.role != DimRole::Fixed) offered.push_back(std::move(d));
  ShardingChoice base;
  base.mesh = mesh;
  base.preconditions = kernel.preconditions;
  for (int id : kernel.outputs)
    base.outputs.push_back({kernel.node(id).shape, ir::dtype_bytes(kernel.node(id).dtype), {}});

  std::vector<int> axes;  // the mesh axes worth splitting over
  for (int a = 0; a < mesh.rank(); ++a)
    if (mesh.sizes[a] > 1) axes.push_back(a);
  const int options = static_cast<int>(offered.size()) + 1;  // replicate, or one offered dim
  std::vector<int> pick(axes.size(), 0);
  std::vector<ShardingChoice> out;
  while (true) {
    ShardingChoice c = base;
    for (int d = 0; d < static_cast<int>(offered.size()); ++d) {
      DimShard s{offered[d].dim, {}, offered[d].role};
      for (std::size_t i = 0; i < axes.size(); ++i)
        if (pick[i] == d + 1) s.axes.push_back(axes[i]);
      if (!s.axes.empty()) c.shards.push_back(std::move(s));
    }
    for (std::size_t k = 0; k < kernel.outputs.size(); ++k) {
      for (const DimShard& s : c.shards) {
        const DimInfo& info = *std::find_if(offered.begin(), offered.end(),
                                            [&](const DimInfo& i) { return i.dim == s.dim; });
        if (std::count(info.reduced_at.begin(), info.reduced_at.end(), kernel.outputs[k]))
          c.outputs[k].reduce_axes.insert(c.outputs[k].reduce_axes.end(), s.axes.begin(),
                                          s.axes.end());
      }
      std::sort(c.outputs[k].reduce_axes.begin(), c.outputs[k].reduce_axes.end());
    }
    c.text = choice_text(c.shards, false);
    bool partial = std::any_of(c.outputs.begin(), c.outputs.end(),
                               [](const auto& o) { return !o.reduce_axes.empty(); });
    out.push_back(c);
    bool scatterable = std::none_of(c.outputs.begin(), c.outputs.end(), [](const auto& o) {
      return !o.reduce_axes.empty() && o.shape.empty();
    });
    if (partial && scatterable) {
      c.reduce_scatter = true;
      c.text = choice_text(c.shards, true);
      out.push_back(std::move(c));
    }
    std::size_t i = 0;  // next assignment (mixed-radix counter, last axis fastest)
    for (i = axes.size(); i-- > 0;) {
      if (++pick[i] < options) break;
      pick[i] = 0;
    }
    if (i == static_cast<std::size_t>(-1)) break;
  }
  return out;
}

std::vector<ShardingChoice> sharding_choices(const ir::Kernel& kernel, const MeshShape& mesh,
                                             const sem::DimEnv& global) {
  std::vector<ShardingChoice> all = sharding_choices(kernel, mesh);
  std::erase_if(all, [&](const ShardingChoice& c) { return !c.local_dims(global).has_value(); });
  return all;
}

}  // namespace ts::mesh

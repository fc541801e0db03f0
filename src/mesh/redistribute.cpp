#include "tilesweep/mesh/redistribute.h"

#include <algorithm>
#include <map>

namespace ts::mesh {

std::vector<Redistribution> redistribute(const Layout& from, const Layout& to,
                                         const MeshShape& mesh) {
  auto bad = [&](const std::string& why) {
    fail({}, "cannot redistribute layout '{}' to '{}' on mesh {}: {}", format_layout(from),
         format_layout(to), mesh.str(), why);
  };
  if (from.rank() != to.rank()) bad("the ranks differ");
  if (from.offset != to.offset)
    bad("the offsets differ (moving a tensor between devices is not a collective)");
  auto is_partial = [](const Layout& l, int a) {
    return std::find(l.partial.begin(), l.partial.end(), a) != l.partial.end();
  };
  std::map<Collective, std::vector<int>> groups;
  for (int a = 0; a < mesh.rank(); ++a) {
    int df = from.dim_of_axis(a), dt = to.dim_of_axis(a);
    bool pf = is_partial(from, a), pt = is_partial(to, a);
    if (pf && pt) continue;
    if (pf) {
      groups[dt >= 0 ? Collective::ReduceScatter : Collective::AllReduce].push_back(a);
    } else if (pt) {
      if (df >= 0)
        bad(fmt::format("axis {} goes from sharded to partial", MeshShape::axis_name(a)));
    } else if (df >= 0 && dt < 0) {
      groups[Collective::AllGather].push_back(a);
    } else if (df >= 0 && dt != df) {
      groups[Collective::AllToAll].push_back(a);
    }
  }
  std::vector<Redistribution> out;
  for (Collective c : {Collective::ReduceScatter, Collective::AllReduce, Collective::AllToAll,
                       Collective::AllGather})
    if (groups.count(c)) out.push_back({c, groups[c]});
  return out;
}

}  // namespace ts::mesh

#include "tilesweep/sweep/units.h"

#include <algorithm>

#include "tilesweep/base/error.h"

namespace ts::sweep {

std::vector<WorkUnit> cut_units(const std::vector<std::int64_t>& sizes, std::int64_t unit_size) {
  if (unit_size < 1) throw InternalError("cut_units: unit_size < 1");
  std::vector<WorkUnit> units;
  for (std::size_t s = 0; s < sizes.size(); ++s)
    for (std::int64_t first = 0; first < sizes[s]; first += unit_size)
      units.push_back({static_cast<std::int64_t>(units.size()), static_cast<int>(s), first,
                       std::min(unit_size, sizes[s] - first)});
  return units;
}

}  // namespace ts::sweep

// The bytes a worker rank sends rank 0 for one completed unit: a store::UnitResult flattened
// (little-endian PODs, length-prefixed strings). Both ends run the same binary, so there is no
// versioning; decode checks lengths and throws InternalError on a malformed message.
#pragma once

#include <string>
#include <string_view>

#include "tilesweep/store/journal.h"

namespace ts::sweep {

std::string encode_unit(const store::UnitResult& u);
store::UnitResult decode_unit(std::string_view bytes);

}  // namespace ts::sweep

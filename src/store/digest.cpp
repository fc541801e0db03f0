#include "digest.h"

#include <fmt/format.h>

namespace ts::store::detail {

std::string Digest::str() const { return fmt::format("fnv1a64:{:016x}", state_); }

}  // namespace ts::store::detail

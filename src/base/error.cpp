#include "tilesweep/base/error.h"

namespace ts {

std::string format_loc(const SourceLoc& loc) {
  if (loc.line <= 0) return loc.file;
  if (loc.col <= 0) return fmt::format("{}:{}", loc.file, loc.line);
  return fmt::format("{}:{}:{}", loc.file, loc.line, loc.col);
}

UserError::UserError(SourceLoc loc, std::string message)
    : std::runtime_error(loc.known() ? format_loc(loc) + ": error: " + message : message),
      loc_(std::move(loc)),
      message_(std::move(message)) {}

}  // namespace ts

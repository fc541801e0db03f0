#include "tilesweep/base/json_string.h"

#include <fmt/format.h>

namespace ts {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\')
      out += '\\', out += static_cast<char>(ch);
    else if (ch == '\n')
      out += "\\n";
    else if (ch == '\t')
      out += "\\t";
    else if (ch < 0x20)
      out += fmt::format("\\u{:04x}", ch);
    else
      out += static_cast<char>(ch);
  }
  return out + "\"";
}

}  // namespace ts

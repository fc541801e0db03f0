// A string as a JSON string literal (also a valid Python string literal): quotes, backslashes
// and control characters escaped. The one quoting the verbs' --json outputs share.
#pragma once

#include <string>
#include <string_view>

namespace ts {

std::string json_string(std::string_view s);

}  // namespace ts

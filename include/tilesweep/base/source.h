// Reading user input files with the checks every front end needs: the file exists, is text,
// and is not absurdly large.
#pragma once

#include <cstddef>
#include <string>

namespace ts {

inline constexpr std::size_t kMaxSourceBytes = 16u << 20;

// Returns the file's contents. Throws UserError (naming the file) when it cannot be read, is
// larger than max_bytes, or is not UTF-8 text (a NUL byte or an invalid sequence).
std::string read_text_file(const std::string& path, std::size_t max_bytes = kMaxSourceBytes);

// Throws UserError naming `what` when `text` contains a NUL byte or invalid UTF-8.
void check_text(const std::string& what, const std::string& text);

}  // namespace ts

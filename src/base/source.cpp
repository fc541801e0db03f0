#include "tilesweep/base/source.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tilesweep/base/error.h"

namespace ts {

namespace {

// Returns the byte offset of the first invalid UTF-8 sequence, or npos.
std::size_t find_invalid_utf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == 0) return i;
    int extra = c < 0x80           ? 0
                : (c >> 5) == 0x6  ? 1
                : (c >> 4) == 0xE  ? 2
                : (c >> 3) == 0x1E ? 3
                                   : -1;
    if (extra < 0 || i + extra >= s.size() + (extra == 0 ? 1 : 0)) return i;
    for (int k = 1; k <= extra; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return i;
    i += extra + 1;
  }
  return std::string::npos;
}

}  // namespace

void check_text(const std::string& what, const std::string& text) {
  std::size_t bad = find_invalid_utf8(text);
  if (bad == std::string::npos) return;
  int line = 1;
  for (std::size_t i = 0; i < bad; ++i) line += text[i] == '\n';
  fail(SourceLoc{what, line, 0},
       "file is not UTF-8 text (a NUL byte or an invalid UTF-8 sequence); kernel and job files "
       "must be text");
}

std::string read_text_file(const std::string& path, std::size_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw UserError(fmt::format("error: '{}' is a directory, not a file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("error: cannot open '{}': {}", path, std::strerror(errno)));
  auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes)
    throw UserError(
        fmt::format("error: '{}' is {} bytes, more than the {} byte limit for input "
                    "files; is this the right file?",
                    path, size, max_bytes));
  // Read at most one byte past the limit, whatever the file claims to be: a device such as
  // /dev/zero or a pipe has no size to ask, and must not be read until memory runs out.
  std::string text;
  char buf[1 << 16];
  while (text.size() <= max_bytes && in.read(buf, sizeof buf).gcount() > 0)
    text.append(buf, static_cast<std::size_t>(in.gcount()));
  if (in.bad())
    throw UserError(fmt::format("error: cannot read '{}': {}", path, std::strerror(errno)));
  if (text.size() > max_bytes)
    throw UserError(
        fmt::format("error: '{}' holds more than the {} byte limit for input files (it is not "
                    "a regular file); is this the right file?",
                    path, max_bytes));
  check_text(path, text);
  return text;
}

}  // namespace ts

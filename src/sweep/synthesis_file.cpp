#include "tilesweep/sweep/synthesis_file.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "tilesweep/base/durable_file.h"
#include "tilesweep/base/hash.h"

namespace ts::sweep {

namespace {

// "# tilesweep-synthesis v1 <version> <fnv of the body>\n" then the body.
std::string header(const std::string& tool_version, const std::string& body) {
  return fmt::format("# tilesweep-synthesis v1 {} {:016x}\n", tool_version, hash_bytes(body));
}

}  // namespace

std::string synthesis_path(const std::string& archive) { return archive + ".synthesis"; }

std::string read_synthesis_records(const std::string& path, const std::string& tool_version) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  std::size_t eol = all.find('\n');
  if (eol == std::string::npos) return "";
  std::string body = all.substr(eol + 1);
  return all.substr(0, eol + 1) == header(tool_version, body) ? body : "";
}

void write_synthesis_records(const std::string& path, const std::string& tool_version,
                             const std::string& records) {
  write_file_durably(path, header(tool_version, records) + records, "synthesis records file");
}

}  // namespace ts::sweep

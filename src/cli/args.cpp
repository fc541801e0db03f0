#include "args.h"

#include <algorithm>
#include <charconv>

#include "tilesweep/base/error.h"
#include "tilesweep/base/source.h"
#include "tilesweep/base/suggest.h"

namespace ts::cli {

sem::DimEnv parse_shape_arg(const std::string& text) {
  sem::DimEnv env;
  std::size_t p = 0;
  if (text.empty())
    throw UserError(
        "error: --shape is empty; expected NAME=INT[,NAME=INT...], e.g. --shape M=64,N=32");
  while (p <= text.size()) {
    std::size_t q = text.find(',', p);
    std::string part = text.substr(p, q == std::string::npos ? std::string::npos : q - p);
    std::size_t eq = part.find('=');
    std::string name = part.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : part.substr(eq + 1);
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    bool ok_name =
        !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
    if (eq == std::string::npos || !ok_name || value.empty() || ec != std::errc() ||
        ptr != value.data() + value.size())
      throw UserError(fmt::format(
          "error: --shape: expected NAME=INT, got '{}' (e.g. --shape M=64,N=32)", part));
    if (v < 1)
      throw UserError(fmt::format("error: --shape: {} must be at least 1, got {}", name, v));
    if (!env.emplace(name, v).second)
      throw UserError(fmt::format("error: --shape: {} is given twice", name));
    if (q == std::string::npos) break;
    p = q + 1;
  }
  return env;
}

std::pair<std::string, std::string> parse_input_arg(const std::string& text) {
  std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UserError(fmt::format("error: --input: expected NAME=FILE.npy, got '{}'", text));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

sem::OpTable load_ops(const std::vector<std::string>& ops_files) {
  sem::OpTable table = sem::OpTable::builtin();
  for (const auto& f : ops_files) table.load(read_text_file(f), f);
  return table;
}

void check_dims(const ir::Kernel& k, const sem::DimEnv& dims) {
  std::string all;
  for (const auto& d : k.dims) all += (all.empty() ? "" : ", ") + d;
  for (const auto& [name, v] : dims)
    if (std::find(k.dims.begin(), k.dims.end(), name) == k.dims.end())
      throw UserError(fmt::format("error: --shape: kernel '{}' has no dim '{}'{} (its dims: {})",
                                  k.name, name, did_you_mean(name, k.dims), all));
  for (const auto& d : k.dims)
    if (!dims.count(d))
      throw UserError(fmt::format(
          "error: --shape: dim '{}' of kernel '{}' is missing (give all of: {})", d, k.name, all));
  for (const auto& p : k.preconditions) {
    if (p.holds(dims) != false) continue;
    std::string what = fmt::format(
        "--shape: kernel '{}' requires {} ({}), but the shape gives {}; pick dims where {} holds",
        k.name, p.str(), p.what, p.values(dims), p.str());
    if (p.loc.known()) throw UserError(p.loc, what);
    throw UserError("error: " + what);
  }
}

}  // namespace ts::cli

#include "config_delta.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace ts::report::detail {
namespace {

using Knobs =
    std::vector<std::pair<std::string, std::string>>;  // key -> value; flags have value ""

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (std::size_t end; (end = s.find(sep, at)) != std::string::npos; at = end + sep.size())
    out.push_back(s.substr(at, end - at));
  out.push_back(s.substr(at));
  return out;
}

// "pt=128 block=1" -> {{pt, 128}, {block, 1}}; a word without '=' is a flag. Nothing when a word
// holds brackets or quotes (a lowering, compared whole).
bool knobs_of(const std::string& text, const std::string& prefix, Knobs& out) {
  Knobs knobs;
  for (const auto& word : split(text, " ")) {
    if (word.empty()) continue;
    if (word.find_first_of("()'\",") != std::string::npos) return false;
    auto eq = word.find('=');
    if (eq == std::string::npos)
      knobs.emplace_back(prefix + word, "");
    else
      knobs.emplace_back(prefix + word.substr(0, eq), word.substr(eq + 1));
  }
  out.insert(out.end(), knobs.begin(), knobs.end());
  return true;
}

Knobs parse(const std::string& config) {
  Knobs out;
  auto parts = split(config, " | ");
  if (!knobs_of(parts[0], "", out)) out.emplace_back("config", parts[0]);
  for (std::size_t i = 1; i < parts.size(); ++i) {
    auto colon = parts[i].find(": ");
    std::string name =
        colon == std::string::npos ? fmt::format("part{}", i) : parts[i].substr(0, colon);
    std::string body = colon == std::string::npos ? parts[i] : parts[i].substr(colon + 2);
    if (!knobs_of(body, name + ".", out)) out.emplace_back(name, body);
  }
  return out;
}

std::string shorten(const std::string& s, std::size_t width) {
  return s.size() <= width ? s : s.substr(0, width) + "..";
}

const std::string* find(const Knobs& knobs, const std::string& key) {
  auto it = std::find_if(knobs.begin(), knobs.end(), [&](const auto& k) { return k.first == key; });
  return it == knobs.end() ? nullptr : &it->second;
}

}  // namespace

std::string config_delta(const std::string& before, const std::string& after, std::size_t width) {
  if (before == after) return "";
  Knobs a = parse(before), b = parse(after);
  std::vector<std::string> out;
  auto gone = [&](const std::string& key, const std::string& value) {
    return value.empty() ? "-" + key : fmt::format("-{}={}", key, shorten(value, width));
  };
  for (const auto& [key, value] : a) {
    const std::string* other = find(b, key);
    if (!other)
      out.push_back(gone(key, value));
    else if (*other != value)
      out.push_back(
          fmt::format("{}: {} -> {}", key, shorten(value, width), shorten(*other, width)));
  }
  for (const auto& [key, value] : b)
    if (!find(a, key))
      out.push_back(value.empty() ? "+" + key : fmt::format("+{}={}", key, shorten(value, width)));
  std::string joined;
  for (const auto& d : out) joined += (joined.empty() ? "" : "; ") + d;
  return joined;
}

}  // namespace ts::report::detail

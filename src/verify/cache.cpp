#include "tilesweep/verify/cache.h"

#include <fmt/format.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "tilesweep/base/durable_file.h"
#include "tilesweep/base/hash.h"

namespace ts::verify {

namespace {

// Replaces whole-word dim names by d0, d1, ... in order of first appearance in `order`.
std::string rename_dims(const std::string& text, const std::vector<std::string>& order) {
  std::string out = text;
  for (std::size_t i = 0; i < order.size(); ++i)
    out = std::regex_replace(out, std::regex("\\b" + order[i] + "\\b"), fmt::format("$d{}", i));
  return out;
}

std::string body_text(const ir::Kernel& k) {
  std::string s;
  for (const auto& p : k.params) s += (p.scalar ? "scalar " : "tensor ") + sem::format_shape(p.shape) + ";";
  for (std::size_t i = 0; i < k.nodes.size(); ++i) {
    const auto& n = k.nodes[i];
    if (n.param >= 0) {
      s += fmt::format("%{}=param{};", i, n.param);
      continue;
    }
    s += fmt::format("%{}={}(", i, n.op);
    for (int in : n.inputs) s += fmt::format("%{},", in);
    for (const auto& [name, v] : n.attrs) s += name + "=" + sem::to_string(v) + ",";
    s += ");";
  }
  s += "out";
  for (int o : k.outputs) s += fmt::format(",%{}", o);
  return s;
}

}  // namespace

std::string canonical_text(const ir::Kernel& k) { return rename_dims(body_text(k), k.dims); }

std::string VerdictCache::key(const ir::Kernel& a, const ir::Kernel& b) {
  std::vector<std::string> order = a.dims;
  for (const auto& d : b.dims)
    if (std::find(order.begin(), order.end(), d) == order.end()) order.push_back(d);
  std::string text = rename_dims(body_text(a), order) + " == " + rename_dims(body_text(b), order);
  return fmt::format("{:016x}", hash_bytes(text));
}

VerdictCache::VerdictCache(std::string path) : path_(std::move(path)) {
  std::ifstream in(path_);
  std::stringstream text;
  text << in.rdbuf();
  absorb(text.str());
}

void VerdictCache::absorb(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::lock_guard<std::mutex> lock(mu_);
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string key, kind;
    if (!(ss >> key >> kind)) continue;
    Verdict v;
    if (kind == "equivalent") v.kind = VerdictKind::Equivalent;
    else if (kind == "not-equivalent") v.kind = VerdictKind::NotEquivalent;
    else if (kind == "unknown") v.kind = VerdictKind::Unknown;
    else continue;
    std::getline(ss, v.reason);
    if (!v.reason.empty() && v.reason[0] == ' ') v.reason.erase(0, 1);
    verdicts_[key] = v;
  }
}

std::optional<Verdict> VerdictCache::find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = verdicts_.find(key);
  if (it == verdicts_.end()) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  return it->second;
}

void VerdictCache::insert(const std::string& key, const Verdict& v) {
  std::lock_guard<std::mutex> lock(mu_);
  verdicts_[key] = v;
}

std::size_t VerdictCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return verdicts_.size();
}

std::size_t VerdictCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

std::size_t VerdictCache::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}

namespace {

const char* kind_word(VerdictKind k) {
  switch (k) {
    case VerdictKind::Equivalent: return "equivalent";
    case VerdictKind::NotEquivalent: return "not-equivalent";
    case VerdictKind::Unknown: return "unknown";
  }
  return "unknown";
}

// A reason on one line, so that every verdict is one line of the file.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

void VerdictCache::save() const {
  if (path_.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& [key, v] : verdicts_)
    if (v.kind != VerdictKind::Unknown) out += key + ' ' + kind_word(v.kind) + ' ' + one_line(v.reason) + '\n';
  write_file_durably(path_, out, "the proof cache");
}

std::string VerdictCache::text() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& [key, v] : verdicts_) out += fmt::format("{} {} {}\n", key, kind_word(v.kind), one_line(v.reason));
  return out;
}

}  // namespace ts::verify

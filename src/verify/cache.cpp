#include "tilesweep/verify/cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "tilesweep/base/durable_file.h"
#include "tilesweep/base/hash.h"

namespace ts::verify {

namespace {

// Bumped whenever the encoding or the key changes meaning: a cache file of another version is
// ignored as a whole (its verdicts may have been decided under other rules).
constexpr const char* kCacheVersion = "tilesweep-proof-cache v2";

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Replaces every whole identifier of `text` found in `names` by its position `$d<i>`; the text is
// a dim expression (a shape, a size, an attribute value), never an op name.
std::string rename_dims(const std::string& text, const std::map<std::string, int>& names) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (!ident_char(text[i])) {
      out += text[i++];
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && ident_char(text[j])) ++j;
    std::string word = text.substr(i, j - i);
    auto it = names.find(word);
    out += it == names.end() ? word : fmt::format("$d{}", it->second);
    i = j;
  }
  return out;
}

// The element expression exactly as the encoder reads it: every term's operator, constant (as a
// hexadecimal float: no rounding), variable, operand and size. Two nodes with equal text compute
// the same function, whatever op (or --ops file) they came from.
std::string term_text(const sem::TermGraph& g, const std::map<std::string, int>& dims) {
  std::string s = fmt::format("r{}:", g.root);
  for (const auto& t : g.nodes) {
    s += fmt::format("{}.{}.{}.{}.{:a}.{}.{}", static_cast<int>(t.op), static_cast<int>(t.func),
                     static_cast<int>(t.reducer), t.integer ? 1 : 0, t.value, t.var, t.operand);
    if (t.op == sem::TermOp::Size) s += "[" + rename_dims(t.size.str(), dims) + "]";
    for (int a : t.args) s += fmt::format(",{}", a);
    s += ";";
  }
  return s;
}

std::string shape_text(const std::vector<sem::Dim>& shape, const std::map<std::string, int>& dims) {
  return rename_dims(sem::format_shape(shape), dims);
}

// `param_of[i]` is the position parameter i of `k` is matched to (identity for a lone kernel).
std::string body_text(const ir::Kernel& k, const std::map<std::string, int>& dims,
                      const std::vector<int>& param_of) {
  std::string s;
  std::vector<std::string> params(k.params.size());
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const auto& p = k.params[i];
    params[param_of[i]] = (p.scalar ? "scalar " : "tensor ") + shape_text(p.shape, dims) + ";";
  }
  for (const auto& p : params) s += p;
  for (const auto& p : k.preconditions)
    s += fmt::format("pre {} {} {};", rename_dims(p.lhs.str(), dims), sem::to_string(p.cmp),
                     rename_dims(p.rhs.str(), dims));
  for (std::size_t i = 0; i < k.nodes.size(); ++i) {
    const auto& n = k.nodes[i];
    s += fmt::format("%{}{}=", i, shape_text(n.shape, dims));
    if (n.param >= 0) {
      s += fmt::format("param{};", param_of[n.param]);
      continue;
    }
    s += n.op + "(";
    for (int in : n.inputs) s += fmt::format("%{},", in);
    for (const auto& [name, v] : n.attrs)
      s += name + "=" + rename_dims(sem::to_string(v), dims) + ",";
    s += ")" + term_text(n.body, dims) + ";";
  }
  s += "out";
  for (int o : k.outputs) s += fmt::format(",%{}", o);
  return s;
}

std::map<std::string, int> positions(const std::vector<std::string>& order) {
  std::map<std::string, int> m;
  for (const auto& d : order) m.emplace(d, static_cast<int>(m.size()));
  return m;
}

std::vector<int> identity(std::size_t n) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int>(i);
  return v;
}

}  // namespace

std::string canonical_text(const ir::Kernel& k) {
  return body_text(k, positions(k.dims), identity(k.params.size()));
}

std::string VerdictCache::key(const ir::Kernel& a, const ir::Kernel& b,
                              const std::vector<int>& b_positions) {
  // Dims by position of first appearance (in a, then in b), never by their text; b's
  // parameters by the position of the parameter of a they are matched to (by name).
  std::vector<std::string> order = a.dims;
  for (const auto& d : b.dims)
    if (std::find(order.begin(), order.end(), d) == order.end()) order.push_back(d);
  auto dims = positions(order);
  std::string text = std::string(kCacheVersion) + "\n" +
                     body_text(a, dims, identity(a.params.size())) +
                     " == " + body_text(b, dims, b_positions);
  return fmt::format("{:016x}{:016x}", hash_bytes(text), hash_bytes(text, 0x9e3779b97f4a7c15ull));
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
  // The first line names the version; a file of another version (or none) is ignored whole.
  if (!std::getline(in, line) || line != std::string("# ") + kCacheVersion) return;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string key, kind;
    if (!(ss >> key >> kind)) continue;
    Verdict v;
    if (kind == "equivalent")
      v.kind = VerdictKind::Equivalent;
    else if (kind == "not-equivalent")
      v.kind = VerdictKind::NotEquivalent;
    else if (kind == "unknown")
      v.kind = VerdictKind::Unknown;
    else
      continue;
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
    case VerdictKind::Equivalent:
      return "equivalent";
    case VerdictKind::NotEquivalent:
      return "not-equivalent";
    case VerdictKind::Unknown:
      return "unknown";
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
  std::string out = std::string("# ") + kCacheVersion + "\n";
  for (const auto& [key, v] : verdicts_)
    if (v.kind != VerdictKind::Unknown)
      out += key + ' ' + kind_word(v.kind) + ' ' + one_line(v.reason) + '\n';
  write_file_durably(path_, out, "the proof cache");
}

std::string VerdictCache::text() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out = std::string("# ") + kCacheVersion + "\n";
  for (const auto& [key, v] : verdicts_)
    out += fmt::format("{} {} {}\n", key, kind_word(v.kind), one_line(v.reason));
  return out;
}

}  // namespace ts::verify

#include "tilesweep/report/job_view.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <filesystem>

#include "tilesweep/base/error.h"
#include "tilesweep/ir/frontend.h"
#include "tilesweep/semantics/op_spec.h"

namespace ts::report {
namespace {

namespace fs = std::filesystem;

// The archive key of a job-relative kernel path: keys are the job's folder joined with the
// relative path, so the key ending in the path (less its leading "..") is the one.
std::string find_source(const std::string& rel, const std::map<std::string, std::string>& sources) {
  fs::path tail;
  for (const auto& part : fs::path(rel).lexically_normal())
    if (!(tail.empty() && (part == ".." || part == "."))) tail /= part;
  std::string want = tail.string();
  for (const auto& [key, text] : sources) {
    std::string k = fs::path(key).lexically_normal().string();
    if (k == want ||
        (k.size() > want.size() && k.compare(k.size() - want.size(), want.size(), want) == 0 &&
         k[k.size() - want.size() - 1] == '/'))
      return key;
  }
  return "";
}

std::string implicit_label(const JobKernelRef& k,
                           const std::map<std::string, std::string>& sources) {
  if (k.source.empty()) return fs::path(k.file).stem().string();
  try {
    ir::Module m = ir::parse_module(sources.at(k.source), k.source, sem::OpTable::builtin());
    return m.kernel("").name;
  } catch (const std::exception&) {
    return fs::path(k.file).stem().string();
  }
}

template <class T>
T get_or(const toml::table* t, const char* key, T fallback) {
  if (!t) return fallback;
  return (*t)[key].value_or(fallback);
}

}  // namespace

const JobKernelRef* JobView::kernel(const std::string& label) const {
  for (const auto& k : kernels)
    if (k.label == label) return &k;
  return nullptr;
}

std::string suite_of(const std::string& file) {
  for (const auto& part : fs::path(file))
    if (part == "axon" || part == "nkibench") return part.string();
  return "other";
}

JobView parse_job_view(const std::string& job_toml,
                       const std::map<std::string, std::string>& sources,
                       const std::string& where) {
  toml::table doc;
  try {
    doc = toml::parse(job_toml, where);
  } catch (const toml::parse_error& e) {
    throw UserError(
        fmt::format("error: {}: the recorded job file does not parse: {}", where, e.description()));
  }
  JobView v;
  v.name = doc["name"].value_or(std::string());
  if (const toml::array* ks = doc["kernel"].as_array())
    for (const auto& node : *ks) {
      const toml::table* t = node.as_table();
      if (!t) continue;
      JobKernelRef k;
      k.file = get_or<std::string>(t, "file", "");
      k.name = get_or<std::string>(t, "name", "");
      k.source = find_source(k.file, sources);
      k.label = get_or<std::string>(t, "label", k.name);
      if (k.label.empty()) k.label = implicit_label(k, sources);
      k.suite = suite_of(k.file);
      v.kernels.push_back(std::move(k));
    }
  const toml::table* s = doc["search"].as_table();
  v.max_block = static_cast<int>(get_or<std::int64_t>(s, "max_block", v.max_block));
  v.isa_depth = static_cast<int>(get_or<std::int64_t>(s, "isa_depth", v.isa_depth));
  v.max_lowerings = static_cast<int>(get_or<std::int64_t>(s, "max_lowerings", v.max_lowerings));
  if (const toml::array* b = s ? (*s)["bufs"].as_array() : nullptr) {
    v.bufs.clear();
    for (const auto& x : *b) v.bufs.push_back(static_cast<int>(x.value_or<std::int64_t>(1)));
  }
  return v;
}

}  // namespace ts::report

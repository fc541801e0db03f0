#include "tilesweep/report/job_view.h"

#include <fmt/format.h>

#include <filesystem>

#include "tilesweep/base/error.h"
#include "tilesweep/base/toml_reader.h"
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

// Optional typed values of an archived job (checked when the run read it; a file written by
// hand or damaged gets the reader's file:line:col error).
std::string string_or(const TomlReader& r, const toml::table* t, const char* key,
                      const std::string& fallback) {
  const toml::node* n = t ? t->get(key) : nullptr;
  return n ? r.string(*n, key) : fallback;
}

int int_or(const TomlReader& r, const toml::table* t, const char* key, int fallback) {
  const toml::node* n = t ? t->get(key) : nullptr;
  return n ? static_cast<int>(r.integer(*n, std::string("search.") + key, 1, 1 << 20)) : fallback;
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
  TomlReader r(where);
  toml::table doc;
  try {
    doc = r.parse(job_toml);
  } catch (const UserError& e) {
    throw UserError(
        fmt::format("{} (the job file recorded in the archive does not parse)", e.what()));
  }
  JobView v;
  v.name = string_or(r, &doc, "name", "");
  if (const toml::node* ks = doc.get("kernel"))
    for (const auto& node : r.list(*ks, "kernel", "[[kernel]] tables")) {
      const toml::table* t = node.as_table();
      if (!t) continue;
      JobKernelRef k;
      k.file = string_or(r, t, "file", "");
      k.name = string_or(r, t, "name", "");
      k.source = find_source(k.file, sources);
      k.label = string_or(r, t, "label", k.name);
      if (k.label.empty()) k.label = implicit_label(k, sources);
      k.suite = suite_of(k.file);
      v.kernels.push_back(std::move(k));
    }
  const toml::table* s = r.table(doc, "search");
  v.max_block = int_or(r, s, "max_block", v.max_block);
  v.isa_depth = int_or(r, s, "isa_depth", v.isa_depth);
  v.max_lowerings = int_or(r, s, "max_lowerings", v.max_lowerings);
  v.cores = int_or(r, s, "cores", v.cores);
  if (const toml::node* b = s ? s->get("bufs") : nullptr) {
    v.bufs.clear();
    for (const auto& x : r.list(*b, "search.bufs", "[1, 2]"))
      v.bufs.push_back(static_cast<int>(r.integer(x, "search.bufs", 1, 64)));
  }
  return v;
}

}  // namespace ts::report

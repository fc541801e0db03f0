#include "tilesweep/report/select.h"

#include <fmt/format.h>

#include <cmath>
#include <deque>
#include <tuple>

#include "tilesweep/base/error.h"

namespace ts::report {

LoadedArchive load_archive(const std::string& path) {
  LoadedArchive l;
  l.path = path;
  l.archive = store::read_archive(path);
  l.provenance = store::read_provenance(path, l.archive);
  return l;
}

namespace {

using Key = std::tuple<std::string, std::string, std::string, std::string>;

struct Pick {
  const LoadedArchive* from = nullptr;
  std::size_t row = 0;
};

store::LibraryEntry make_entry(const LoadedArchive& l, std::size_t row) {
  const store::BestRecord& b = l.archive.best[row];
  const store::SourceRecord& s = l.provenance.sources[l.provenance.best_origin[row].source];
  store::LibraryEntry e;
  e.kernel = b.kernel, e.target = b.target, e.shape = b.shape, e.mesh = b.mesh,
  e.sharding = b.sharding;
  e.variant = b.variant, e.choice = b.choice, e.index = b.index, e.config = b.config;
  e.latency_ns = b.latency_ns, e.roofline_ns = b.roofline_ns, e.heuristic_ns = b.heuristic_ns;
  e.roofline_pct = 100.0 * b.roofline_ns / b.latency_ns;
  e.archive = s.path, e.job_name = s.job_name, e.tool_version = s.tool_version;
  return e;
}

}  // namespace

store::Library select_library(const std::vector<std::string>& paths, const SelectOptions& options) {
  std::deque<LoadedArchive> loaded;
  std::map<Key, Pick> best;
  auto tell = [&](const std::string& what) {
    if (options.progress) options.progress(what);
  };
  for (std::size_t a = 0; a < paths.size(); ++a) {
    tell(fmt::format("reading archive {} ({}/{})", paths[a], a + 1, paths.size()));
    const LoadedArchive& l = loaded.emplace_back(load_archive(paths[a]));
    for (std::size_t r = 0; r < l.archive.best.size(); ++r) {
      const store::BestRecord& b = l.archive.best[r];
      if (!std::isfinite(b.latency_ns)) continue;
      auto [it, fresh] = best.try_emplace(Key{b.kernel, b.target, b.shape, b.mesh}, Pick{&l, r});
      if (!fresh && b.latency_ns < it->second.from->archive.best[it->second.row].latency_ns)
        it->second = {&l, r};
    }
  }
  store::Library lib;
  lib.tool_version = options.tool_version;
  lib.archives = paths;
  NkiEmitter emitter;
  std::size_t done = 0;
  for (const auto& [key, pick] : best) {
    store::LibraryEntry e = make_entry(*pick.from, pick.row);
    if (options.emit_nki) {
      tell(fmt::format("NKI source {}/{}: {} {} {} mesh {}", ++done, best.size(), e.kernel,
                       e.target, e.shape, e.mesh));
      const auto& prov = pick.from->provenance;
      NkiResult nki =
          emitter.emit(pick.from->archive.meta, prov.sources[prov.best_origin[pick.row].source],
                       pick.from->archive.best[pick.row], options.nki_api, options.nki_generic);
      e.nki = std::move(nki.source), e.nki_error = std::move(nki.error);
    } else {
      e.nki_error = "not emitted (--no-nki)";
    }
    lib.entries.push_back(std::move(e));
  }
  return lib;
}

}  // namespace ts::report

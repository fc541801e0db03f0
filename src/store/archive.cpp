#include "tilesweep/store/archive.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "digest.h"
#include "hdf5_handle.h"
#include "meta_io.h"
#include "table_io.h"
#include "tilesweep/base/durable_file.h"
#include "tilesweep/base/error.h"
#include "tilesweep/store/provenance.h"

namespace ts::store {
namespace {

using detail::DamageError;
using detail::Handle;
using detail::Hdf5;
using detail::Hdf5Error;
using detail::LayoutError;

// The archive's file image, built in memory.
std::string archive_image(const Hdf5& h, const Meta& meta,
                          std::span<const CandidateRecord> candidates,
                          std::span<const BestRecord> best, std::span<const ProofRecord> proofs,
                          std::span<const ProgressRecord> progress, const Provenance* provenance) {
  if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0) h.fail("this HDF5 library has no deflate filter");
  Handle file = detail::create_in_memory(h);
  detail::write_meta(h, file, meta);
  detail::write_table(h, file, candidates);
  detail::write_table(h, file, best);
  detail::write_table(h, file, proofs);
  detail::write_table(h, file, progress);
  if (provenance) {
    detail::write_table<SourceRecord>(h, file, provenance->sources);
    detail::write_table<OriginRecord>(h, file, provenance->best_origin);
  }
  return detail::file_image(h, file);
}

// HDF5 builds the file in memory; it reaches the disk only through write_file_durably (a
// temporary, checked writes, fsync, rename), so a full disk is one clean error.
void write_atomically(const std::string& path, const Meta& meta,
                      std::span<const CandidateRecord> candidates, std::span<const BestRecord> best,
                      std::span<const ProofRecord> proofs, std::span<const ProgressRecord> progress,
                      const Provenance* provenance) {
  Hdf5 h(path);
  std::string image;
  try {
    image = archive_image(h, meta, candidates, best, proofs, progress, provenance);
  } catch (const Hdf5Error& e) {
    throw UserError(fmt::format("error: cannot write archive '{}': {}", path, e.detail()));
  }
  write_file_durably(path, image, "archive");
}

}  // namespace

void write_archive(const std::string& path, const Meta& meta,
                   std::span<const CandidateRecord> candidates, std::span<const BestRecord> best,
                   std::span<const ProofRecord> proofs, std::span<const ProgressRecord> progress) {
  write_atomically(path, meta, candidates, best, proofs, progress, nullptr);
}

void write_archive(const std::string& path, const Archive& a, const Provenance& provenance) {
  if (provenance.best_origin.size() != a.best.size())
    throw InternalError(fmt::format("archive '{}': {} /best rows but {} origins", path,
                                    a.best.size(), provenance.best_origin.size()));
  write_atomically(path, a.meta, a.candidates, a.best, a.proofs, a.progress, &provenance);
}

void write_archive(const std::string& path, const Archive& a) {
  write_archive(path, a.meta, a.candidates, a.best, a.proofs, a.progress);
}

namespace {

[[noreturn]] void not_archive(const std::string& path, const std::string& what) {
  throw UserError(fmt::format("error: not a tilesweep archive: '{}' {}", path, what));
}

[[noreturn]] void corrupt(const std::string& path, const std::string& what) {
  throw UserError(fmt::format("error: truncated or corrupt HDF5 file: '{}' ({})", path, what));
}

[[noreturn]] void damaged(const std::string& path, const std::string& what) {
  throw UserError(
      fmt::format("error: damaged archive '{}': {}; it cannot be trusted: restore it from a copy "
                  "or run its job again",
                  path, what));
}

// Opens `path` read-only after telling apart a missing file, a non-HDF5 file and a damaged one.
Handle open_file(const Hdf5& h) {
  const std::string& path = h.path();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw UserError(fmt::format("error: cannot open archive '{}': {}", path, std::strerror(errno)));
  struct stat st {};
  bool is_dir = ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
  ::close(fd);
  if (is_dir) throw UserError(fmt::format("error: cannot open archive '{}': it is a folder", path));
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    detail::take_error_stack();
    not_archive(path, "is not an HDF5 file");
  }
  Handle fapl = detail::file_access(h);
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl);
  if (id < 0) {
    std::string why = "open: " + detail::take_error_stack();
    if (why.find("checksum") != std::string::npos) damaged(path, why);
    corrupt(path, why);
  }
  return Handle(id, H5Fclose);
}

detail::MetaRead checked_meta(const Hdf5& h, hid_t file) {
  detail::MetaRead read;
  try {
    read = detail::read_meta(h, file);
  } catch (const Hdf5Error& e) {
    throw Hdf5Error(h.path(), "/meta: " + e.detail());  // the damaged part, wherever HDF5 noticed
  }
  const Meta& m = read.meta;
  if (m.schema_version < kOldestReadableSchema || m.schema_version > kSchemaVersion)
    not_archive(h.path(),
                fmt::format("has schema version {} (this tilesweep reads versions {} to {})",
                            m.schema_version, kOldestReadableSchema, kSchemaVersion));
  return read;
}

// Runs `read` on the open archive, turning layout and HDF5 failures into UserErrors.
template <class F>
auto with_archive(const std::string& path, F&& read) {
  Hdf5 h(path);
  Handle file = open_file(h);
  try {
    return read(h, file.get());
  } catch (const LayoutError& e) {
    not_archive(path, e.what());
  } catch (const Hdf5Error& e) {
    if (e.detail().find("checksum") != std::string::npos) damaged(path, e.detail());
    corrupt(path, e.detail());
  } catch (const DamageError& e) {
    damaged(path, e.what());
  }
}

}  // namespace

Archive read_archive(const std::string& path) {
  return with_archive(path, [](const Hdf5& h, hid_t file) {
    Archive a;
    detail::MetaRead meta = checked_meta(h, file);
    a.meta = std::move(meta.meta);
    const int v = static_cast<int>(a.meta.schema_version);
    const bool sums = meta.checksummed;
    a.candidates = detail::read_table<CandidateRecord>(h, file, v, sums);
    a.best = detail::read_table<BestRecord>(h, file, v, sums);
    a.proofs = detail::read_table<ProofRecord>(h, file, v, sums);
    a.progress = detail::read_table<ProgressRecord>(h, file, v, sums);
    if (v < 2) {  // one device only: the compute time is the latency (sharding "", no collectives)
      for (auto& c : a.candidates) c.compute_ns = c.latency_ns;
      for (auto& b : a.best) b.compute_ns = b.latency_ns, b.collective_ns = 0;
    }
    a.meta.schema_version = kSchemaVersion;  // what it now is in memory (and is written as)
    return a;
  });
}

Meta read_meta(const std::string& path) {
  return with_archive(path, [](const Hdf5& h, hid_t file) { return checked_meta(h, file).meta; });
}

namespace {

// The archive itself as its one source: every row came from it.
Provenance self_provenance(const std::string& path, const Archive& a) {
  Provenance p;
  const Meta& m = a.meta;
  p.sources.push_back({path, m.job_name, m.job_hash, m.tool_version, m.git_commit, m.job_toml, 0,
                       static_cast<std::int64_t>(a.candidates.size()), 0,
                       static_cast<std::int64_t>(a.proofs.size()), 0,
                       static_cast<std::int64_t>(a.progress.size())});
  for (const auto& b : a.best) p.best_origin.push_back({b.kernel, b.target, b.shape, b.mesh, 0});
  return p;
}

}  // namespace

Provenance read_provenance(const std::string& path, const Archive& a) {
  Provenance p = with_archive(path, [](const Hdf5& h, hid_t file) {
    Provenance p;
    if (!h.yes(H5Lexists(file, "sources", H5P_DEFAULT), "look for /sources")) return p;
    const bool sums = detail::read_meta(h, file).checksummed;
    p.sources = detail::read_table<SourceRecord>(h, file, kSchemaVersion, sums);
    p.best_origin = detail::read_table<OriginRecord>(h, file, kSchemaVersion, sums);
    return p;
  });
  if (p.sources.empty()) return self_provenance(path, a);
  if (p.best_origin.size() != a.best.size())
    not_archive(path, fmt::format("has {} /best rows but {} /best_origin rows", a.best.size(),
                                  p.best_origin.size()));
  for (const auto& o : p.best_origin)
    if (o.source < 0 || static_cast<std::size_t>(o.source) >= p.sources.size())
      not_archive(path,
                  fmt::format("/best_origin names source {} of {}", o.source, p.sources.size()));
  return p;
}

}  // namespace ts::store

#include "tilesweep/store/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <unordered_set>
#include <utility>

#include "journal_codec.h"
#include "journal_scan.h"
#include "tilesweep/base/durable_file.h"
#include "tilesweep/base/error.h"

namespace ts::store {
namespace {

using detail::FrameKind;

[[noreturn]] void not_journal(const std::string& path, const std::string& what) {
  throw UserError(fmt::format("error: '{}' is not a tilesweep journal: {}", path, what));
}

// Checks the header frame against this tilesweep and the expected job.
void check_header(const std::string& path, const detail::JournalHeader& h,
                  std::string_view job_hash) {
  if (h.journal_version < detail::kOldestJournalVersion ||
      h.journal_version > detail::kJournalVersion || h.schema_version != kSchemaVersion)
    throw UserError(fmt::format(
        "error: journal '{}' was written by another tilesweep (journal format {}, schema {}; this "
        "one writes format {}, schema {}); finish it with that tilesweep or delete it",
        path, h.journal_version, h.schema_version, detail::kJournalVersion, kSchemaVersion));
  if (!job_hash.empty() && h.job_hash != job_hash)
    throw UserError(fmt::format(
        "error: journal '{}' belongs to a different job (job hash {}, this job {}); use a new "
        "archive path or delete it",
        path, h.job_hash, job_hash));
}

// Folds complete, checksummed frames into `c`: the first must be a header (a second one is the
// copy written with it).
class Folder {
 public:
  Folder(const std::string& path, std::string_view job_hash, JournalContents& c)
      : path_(path), job_hash_(job_hash), c_(c) {}

  void add(std::uint32_t kind, std::string_view payload) {
    if (kind == static_cast<std::uint32_t>(FrameKind::Header)) {
      auto h = detail::decode_header(payload);
      if (c_.frames == 0)
        check_header(path_, h, job_hash_);
      else if (h.job_hash != c_.job_hash)
        throw detail::DecodeError("a second header names another job");
      c_.job_hash = h.job_hash;
    } else if (c_.frames == 0) {
      throw detail::DecodeError("no header frame before it");
    } else if (kind == static_cast<std::uint32_t>(FrameKind::Unit)) {
      add_unit(detail::decode_unit(payload));
    } else if (kind == static_cast<std::uint32_t>(FrameKind::Proofs)) {
      for (auto& p : detail::decode_proofs(payload))
        if (proofs_.insert(p.kind + '\0' + p.kernel + '\0' + p.text).second)
          c_.proofs.push_back(std::move(p));
    } else {
      throw detail::DecodeError(fmt::format("unknown frame kind {}", kind));
    }
    ++c_.frames;
  }

 private:
  void add_unit(UnitResult u) {
    if (!units_.insert(u.progress.unit).second) {
      ++c_.duplicate_units;
      return;
    }
    c_.units.push_back(std::move(u));
  }

  const std::string& path_;
  std::string_view job_hash_;
  JournalContents& c_;
  std::unordered_set<std::int64_t> units_;
  std::set<std::string> proofs_;
};

// The whole file, read-only (mmap: a journal can be large, and it is scanned, not parsed in order).
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw UserError(
          fmt::format("error: cannot open journal '{}': {}", path, std::strerror(errno)));
    struct stat st {};
    int err = ::fstat(fd, &st) == 0 ? 0 : errno;
    if (err == 0 && !S_ISREG(st.st_mode)) err = EINVAL;
    size_ = err == 0 ? static_cast<std::size_t>(st.st_size) : 0;
    if (err == 0 && size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED)
        err = errno;
      else
        data_ = static_cast<const char*>(p);
    }
    ::close(fd);
    if (err != 0)
      throw UserError(fmt::format("error: cannot read journal '{}': {}", path, std::strerror(err)));
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
  }
  std::string_view bytes() const { return {data_, size_}; }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

// Adds the scan's damaged regions to `c`.
void count_damage(const detail::FrameScan& scan, JournalContents& c) {
  std::vector<std::string> where;
  for (const auto& r : scan.damaged) {
    c.dropped_bytes += r.end - r.begin;
    if (r.torn) {
      c.torn_bytes += r.end - r.begin;
      continue;
    }
    c.damaged_frames += r.frames;
    c.damaged_units += r.units;
    where.push_back(fmt::format("bytes {}..{} ({} frame{})", r.begin, r.end, r.frames,
                                r.frames == 1 ? "" : "s"));
  }
  c.damage = fmt::format("{}", fmt::join(where, ", "));
}

}  // namespace

std::string journal_path(const std::string& archive_path) { return archive_path + ".journal"; }

JournalContents read_journal(const std::string& path, std::string_view job_hash) {
  MappedFile file(path);
  std::string_view bytes = file.bytes();
  detail::FrameScan scan = detail::scan_frames(bytes);
  JournalContents c;
  Folder folder(path, job_hash, c);
  for (const auto& f : scan.frames) {
    try {
      folder.add(f.kind, f.payload);
    } catch (const detail::DecodeError& e) {
      if (c.frames == 0 && f.offset == 0) not_journal(path, "its first frame is not a header");
      if (c.frames == 0)
        throw UserError(fmt::format(
            "error: journal '{}' is damaged: its header (which names the job) is lost, "
            "so the {} frame(s) after it cannot be trusted; delete it to start the run over",
            path, scan.frames.size()));
      throw UserError(
          fmt::format("error: journal '{}' is corrupt at byte {}: {}", path, f.offset, e.what()));
    }
  }
  // Not one whole frame, and not even the start of one: some other file.
  if (c.frames == 0 && !bytes.empty() && !detail::kFrameMagic.starts_with(bytes.substr(0, 4)))
    not_journal(path, "it does not start with a journal frame");
  count_damage(scan, c);
  c.valid_bytes = scan.frames.empty()
                      ? 0
                      : scan.frames.back().offset +
                            static_cast<std::int64_t>(detail::kFrameHeadBytes +
                                                      scan.frames.back().payload.size());
  return c;
}

std::string recovery_note(const std::string& path, const JournalContents& c) {
  if (c.dropped_bytes == 0) return "";
  std::string note = fmt::format("journal '{}': kept {} unit(s)", path, c.units.size());
  if (c.damaged_frames > 0)
    note += fmt::format(
        "; dropped {} damaged frame(s) ({} unit result(s) among them, computed again now) at {}: "
        "their checksums do not match (a damaged disk or file)",
        c.damaged_frames, c.damaged_units, c.damage);
  if (c.torn_bytes > 0)
    note += fmt::format(
        "; dropped a torn last frame ({} bytes: a write cut short by a crash; its unit is computed "
        "again)",
        c.torn_bytes);
  if (!c.damaged_copy.empty())
    note += fmt::format("; the damaged file is kept as '{}'", c.damaged_copy);
  return note;
}

namespace {

[[noreturn]] void cannot_write(const std::string& path, int err) {
  throw UserError(fmt::format("error: cannot write journal '{}': {}", path, std::strerror(err)));
}

// One appender per journal: a second process on the same file is refused (where the file
// system supports locks at all).
int open_locked(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) cannot_write(path, errno);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 && (errno == EWOULDBLOCK || errno == EAGAIN)) {
    ::close(fd);
    throw UserError(
        fmt::format("error: journal '{}' is in use by another tilesweep process", path));
  }
  return fd;
}

}  // namespace

namespace {

// The header frame twice, so that one damaged copy still names the job.
std::string header_frames(std::string_view job_hash) {
  std::string header = detail::make_frame(
      FrameKind::Header, detail::encode_header({.job_hash = std::string(job_hash)}));
  return header + header;
}

// Rewrites a damaged journal with its intact contents only (durably, through a temporary), the
// damaged file kept as `<path>.damaged` where the file system allows a hard link. Returns the
// new file's size.
std::int64_t rewrite_intact(const std::string& path, std::string_view job_hash,
                            JournalContents& c) {
  std::string bytes = header_frames(job_hash);
  for (const auto& u : c.units)
    bytes += detail::make_frame(FrameKind::Unit, detail::encode_unit(u));
  if (!c.proofs.empty())
    bytes += detail::make_frame(FrameKind::Proofs, detail::encode_proofs(c.proofs));
  const std::string copy = path + ".damaged";
  std::remove(copy.c_str());
  if (::link(path.c_str(), copy.c_str()) == 0) c.damaged_copy = copy;
  write_file_durably(path, bytes, "journal");
  return static_cast<std::int64_t>(bytes.size());
}

}  // namespace

Journal Journal::open(const std::string& path, std::string_view job_hash) {
  TS_CHECK(!job_hash.empty(), "a journal needs the job hash");
  Journal j(path, open_locked(path), {});
  struct stat st {};
  if (::fstat(j.fd_, &st) != 0) cannot_write(path, errno);
  if (st.st_size > 0) j.recovered_ = read_journal(path, job_hash);
  JournalContents& c = j.recovered_;
  if (c.damaged_frames > 0) {
    // Damage is dropped once: the rewritten file holds only whole frames (and is locked anew).
    j.size_ = rewrite_intact(path, job_hash, c);
    ::close(std::exchange(j.fd_, -1));
    j.fd_ = open_locked(path);
    c.job_hash = job_hash;
    return j;
  }
  // Cut a torn tail (or a torn header: then start afresh) so new frames follow valid ones.
  if (c.frames == 0) c.valid_bytes = 0;
  j.size_ = c.valid_bytes;
  if (j.size_ != st.st_size && ::ftruncate(j.fd_, j.size_) != 0) cannot_write(path, errno);
  if (c.frames == 0) {
    j.write_bytes(header_frames(job_hash));
    c.job_hash = job_hash;
    c.frames = 2;
    c.valid_bytes = j.size_;
    if (int err = sync_parent_dir(path)) cannot_write(path, err);
  }
  return j;
}

Journal::Journal(std::string path, int fd, JournalContents recovered)
    : path_(std::move(path)),
      fd_(fd),
      size_(recovered.valid_bytes),
      recovered_(std::move(recovered)) {}

Journal::Journal(Journal&& o) noexcept
    : path_(std::move(o.path_)),
      fd_(std::exchange(o.fd_, -1)),
      size_(o.size_),
      staged_(std::move(o.staged_)),
      staged_units_(std::exchange(o.staged_units_, 0)),
      recovered_(std::move(o.recovered_)) {}

Journal& Journal::operator=(Journal&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(o.path_);
    fd_ = std::exchange(o.fd_, -1);
    size_ = o.size_;
    staged_ = std::move(o.staged_);
    staged_units_ = std::exchange(o.staged_units_, 0);
    recovered_ = std::move(o.recovered_);
  }
  return *this;
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::append(const UnitResult& unit) {
  stage(unit);
  commit();
}

void Journal::stage(const UnitResult& unit) {
  staged_ += detail::make_frame(FrameKind::Unit, detail::encode_unit(unit));
  ++staged_units_;
}

void Journal::commit() {
  if (staged_.empty()) return;
  std::string frames = std::move(staged_);
  staged_.clear(), staged_units_ = 0;
  write_bytes(frames);
}

void Journal::append_proofs(std::span<const ProofRecord> proofs) {
  write_frame(static_cast<std::uint32_t>(FrameKind::Proofs), detail::encode_proofs(proofs));
}

void Journal::write_frame(std::uint32_t kind, std::string_view payload) {
  write_bytes(detail::make_frame(static_cast<FrameKind>(kind), payload));
}

// One write() of whole frames, then fdatasync(). On failure the file is cut back to its last
// complete frame, so a later append still follows valid frames.
void Journal::write_bytes(std::string_view frame) {
  TS_CHECK(fd_ >= 0, "journal '{}' is closed", path_);
  int err = write_all(fd_, frame);
  if (err == 0 && ::fdatasync(fd_) != 0) err = errno;
  if (err != 0) {
    [[maybe_unused]] int ignored = ::ftruncate(fd_, size_);
    cannot_write(path_, err);
  }
  size_ += static_cast<std::int64_t>(frame.size());
}

}  // namespace ts::store

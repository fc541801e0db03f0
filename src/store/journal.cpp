#include "tilesweep/store/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <unordered_set>
#include <utility>

#include "journal_codec.h"
#include "posix_io.h"
#include "tilesweep/base/error.h"

namespace ts::store {
namespace {

using detail::FrameKind;

[[noreturn]] void not_journal(const std::string& path, const std::string& what) {
  throw UserError(fmt::format("error: '{}' is not a tilesweep journal: {}", path, what));
}

// Checks the header frame against this tilesweep and the expected job.
void check_header(const std::string& path, const detail::JournalHeader& h, std::string_view job_hash) {
  if (h.journal_version != detail::kJournalVersion || h.schema_version != kSchemaVersion)
    throw UserError(fmt::format(
        "error: journal '{}' was written by another tilesweep (journal format {}, schema {}; this "
        "one writes format {}, schema {}); finish it with that tilesweep or delete it",
        path, h.journal_version, h.schema_version, detail::kJournalVersion, kSchemaVersion));
  if (!job_hash.empty() && h.job_hash != job_hash)
    throw UserError(fmt::format(
        "error: journal '{}' belongs to a different job (job hash {}, this job {}); use a new "
        "archive path or delete it", path, h.job_hash, job_hash));
}

// Folds one complete, checksummed frame into `c`: the first must be the header.
class Folder {
 public:
  Folder(const std::string& path, std::string_view job_hash, JournalContents& c)
      : path_(path), job_hash_(job_hash), c_(c) {}

  void add(std::uint32_t kind, std::string_view payload) {
    if (c_.frames == 0) {
      if (kind != static_cast<std::uint32_t>(FrameKind::Header))
        not_journal(path_, "its first frame is not a header");
      auto h = detail::decode_header(payload);
      check_header(path_, h, job_hash_);
      c_.job_hash = h.job_hash;
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

}  // namespace

std::string journal_path(const std::string& archive_path) { return archive_path + ".journal"; }

JournalContents read_journal(const std::string& path, std::string_view job_hash) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw UserError(fmt::format("error: cannot open journal '{}': {}", path, std::strerror(errno)));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("error: cannot open journal '{}': cannot read it", path));
  JournalContents c;
  Folder folder(path, job_hash, c);
  const std::int64_t size = st.st_size;
  std::int64_t pos = 0;
  std::string head(detail::kFrameHeadBytes, '\0'), payload;
  while (size - pos >= static_cast<std::int64_t>(detail::kFrameHeadBytes)) {
    if (!in.read(head.data(), head.size())) break;
    auto fh = detail::parse_head(head);
    if (!fh && pos == 0) not_journal(path, "it does not start with a journal frame");
    if (!fh || fh->length > static_cast<std::uint64_t>(size - pos) - head.size()) break;
    payload.resize(fh->length);
    if (!in.read(payload.data(), payload.size())) break;
    if (!detail::checksum_ok(head, payload, fh->checksum)) break;
    try {
      folder.add(fh->kind, payload);
    } catch (const detail::DecodeError& e) {
      throw UserError(fmt::format("error: journal '{}' is corrupt at byte {}: {}", path, pos, e.what()));
    }
    pos += static_cast<std::int64_t>(head.size() + payload.size());
  }
  // A file too short for one frame head must at least start like one.
  if (pos == 0 && size > 0) {
    std::string start(static_cast<std::size_t>(std::min<std::int64_t>(size, 4)), '\0');
    std::ifstream again(path, std::ios::binary);
    again.read(start.data(), start.size());
    if (start != detail::kFrameMagic.substr(0, start.size()))
      not_journal(path, "it does not start with a journal frame");
  }
  c.valid_bytes = pos;
  c.dropped_bytes = size - pos;
  return c;
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
    throw UserError(fmt::format("error: journal '{}' is in use by another tilesweep process",
                                path));
  }
  return fd;
}

}  // namespace

Journal Journal::open(const std::string& path, std::string_view job_hash) {
  TS_CHECK(!job_hash.empty(), "a journal needs the job hash");
  Journal j(path, open_locked(path), {});
  struct stat st {};
  if (::fstat(j.fd_, &st) != 0) cannot_write(path, errno);
  if (st.st_size > 0) j.recovered_ = read_journal(path, job_hash);
  // Cut a torn tail (or a torn header: then start afresh) so new frames follow valid ones.
  if (j.recovered_.frames == 0) j.recovered_ = JournalContents{};
  j.size_ = j.recovered_.valid_bytes;
  if (j.size_ != st.st_size && ::ftruncate(j.fd_, j.size_) != 0) cannot_write(path, errno);
  if (j.recovered_.frames == 0) {
    j.write_frame(static_cast<std::uint32_t>(FrameKind::Header),
                  detail::encode_header({.job_hash = std::string(job_hash)}));
    j.recovered_.job_hash = job_hash;
    j.recovered_.frames = 1;
    j.recovered_.valid_bytes = j.size_;
    if (int err = detail::sync_parent_dir(path)) cannot_write(path, err);
  }
  return j;
}

Journal::Journal(std::string path, int fd, JournalContents recovered)
    : path_(std::move(path)), fd_(fd), size_(recovered.valid_bytes), recovered_(std::move(recovered)) {}

Journal::Journal(Journal&& o) noexcept
    : path_(std::move(o.path_)), fd_(std::exchange(o.fd_, -1)), size_(o.size_),
      recovered_(std::move(o.recovered_)) {}

Journal& Journal::operator=(Journal&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(o.path_);
    fd_ = std::exchange(o.fd_, -1);
    size_ = o.size_;
    recovered_ = std::move(o.recovered_);
  }
  return *this;
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::append(const UnitResult& unit) {
  write_frame(static_cast<std::uint32_t>(FrameKind::Unit), detail::encode_unit(unit));
}

void Journal::append_proofs(std::span<const ProofRecord> proofs) {
  write_frame(static_cast<std::uint32_t>(FrameKind::Proofs), detail::encode_proofs(proofs));
}

// One write() of the whole frame, then fdatasync(). On failure the file is cut back to its last
// complete frame, so a later append still follows valid frames.
void Journal::write_frame(std::uint32_t kind, std::string_view payload) {
  TS_CHECK(fd_ >= 0, "journal '{}' is closed", path_);
  std::string frame = detail::make_frame(static_cast<FrameKind>(kind), payload);
  int err = detail::write_all(fd_, frame);
  if (err == 0 && ::fdatasync(fd_) != 0) err = errno;
  if (err != 0) {
    [[maybe_unused]] int ignored = ::ftruncate(fd_, size_);
    cannot_write(path_, err);
  }
  size_ += static_cast<std::int64_t>(frame.size());
}

}  // namespace ts::store

#include "tilesweep/base/durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "tilesweep/base/error.h"

namespace ts {
namespace {

int sync_opened(const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

// Writes, syncs and closes a new file; returns 0 or the first failing call's errno.
int write_new_file(const std::string& tmp, std::string_view bytes) {
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  int err = write_all(fd, bytes);
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;  // NFS and friends report a failed flush here
  return err;
}

}  // namespace

int write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;  // no progress: never spin
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

int sync_path(const std::string& path) { return sync_opened(path, O_RDONLY); }

int sync_parent_dir(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return sync_opened(dir.empty() ? "." : dir.string(), O_RDONLY | O_DIRECTORY);
}

std::string temporary_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return fmt::format("{}.tmp.{}.{}", path, ::getpid(), counter++);
}

std::string publish_file(const std::string& tmp, const std::string& path) {
  auto failed = [&](const std::string& what, int err) {
    std::remove(tmp.c_str());
    return what + ": " + std::strerror(err);
  };
  // The bytes are durable before the name moves, and the move is durable before we return.
  if (int err = sync_path(tmp)) return failed("cannot sync '" + tmp + "'", err);
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return failed("cannot rename '" + tmp + "' to it", errno);
  if (int err = sync_parent_dir(path))
    return std::string("cannot sync its folder: ") + std::strerror(err);
  return "";
}

void write_file_durably(const std::string& path, std::string_view bytes, std::string_view what) {
  const std::string tmp = temporary_name(path);
  if (int err = write_new_file(tmp, bytes)) {
    std::remove(tmp.c_str());
    throw UserError(fmt::format("error: cannot write {} '{}': {}", what, path, std::strerror(err)));
  }
  if (std::string why = publish_file(tmp, path); !why.empty())
    throw UserError(fmt::format("error: cannot write {} '{}': {}", what, path, why));
}

void check_writable(const std::string& path, std::string_view what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw UserError(fmt::format("error: {}: '{}' is a folder; name a file in it", what, path));
  std::string folder = std::filesystem::path(path).parent_path().string();
  const std::string probe = temporary_name(path);
  int err = write_new_file(probe, "probe");
  std::remove(probe.c_str());
  if (err != 0)
    throw UserError(fmt::format("error: {}: cannot write in folder '{}': {}", what,
                                folder.empty() ? "." : folder, std::strerror(err)));
}

}  // namespace ts

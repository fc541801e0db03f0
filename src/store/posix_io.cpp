#include "posix_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace ts::store::detail {
namespace {

int sync_opened(const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
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
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

int sync_file(const std::string& path) { return sync_opened(path, O_RDONLY); }

int sync_parent_dir(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return sync_opened(dir.empty() ? "." : dir.string(), O_RDONLY | O_DIRECTORY);
}

std::string publish(const std::string& tmp, const std::string& path) {
  auto failed = [&](const std::string& what, int err) {
    std::remove(tmp.c_str());
    return what + ": " + std::strerror(err);
  };
  // The bytes are durable before the name moves, and the move is durable before we return.
  if (int err = sync_file(tmp)) return failed("cannot sync '" + tmp + "'", err);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return failed("cannot rename '" + tmp + "' to it", errno);
  if (int err = sync_parent_dir(path)) return std::string("cannot sync its folder: ") + std::strerror(err);
  return "";
}

}  // namespace ts::store::detail

// Durable file writes for the archive and the journal (internal to the store). Each function
// returns 0 on success or the errno of the failing call, so callers word their own errors.
#pragma once

#include <string>
#include <string_view>

namespace ts::store::detail {

// write() until every byte is written (retrying partial writes and EINTR).
int write_all(int fd, std::string_view bytes);

// fsync()s the file at `path` (opened read-only for the purpose).
int sync_file(const std::string& path);

// fsync()s the folder holding `path`, so a created or renamed entry in it survives a crash.
int sync_parent_dir(const std::string& path);

// Moves the finished file `tmp` to `path` durably: syncs tmp, renames it, syncs the folder.
// Returns "" on success, else what failed (tmp is then removed).
std::string publish(const std::string& tmp, const std::string& path);

}  // namespace ts::store::detail

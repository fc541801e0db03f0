// The one durable way tilesweep writes a file: the bytes go to a temporary in the same folder,
// every write is checked, the temporary is fsync()ed and renamed over the real name, and the
// folder is fsync()ed. A full disk or an I/O error is an error, never a partial file under the
// real name (an older file there stays intact until the rename). The archive, library, journal,
// proof cache, JSON and NKI files all go through it (HDF5 files through publish_file).
#pragma once

#include <string>
#include <string_view>

namespace ts {

// Writes `bytes` as the whole new content of `path`, durably. Throws UserError
// "error: cannot write <what> '<path>': <why>" (the temporary is removed).
void write_file_durably(const std::string& path, std::string_view bytes,
                        std::string_view what = "file");

// Moves a finished temporary `tmp` (same folder) to `path` durably: syncs tmp, renames it, syncs
// the folder. Returns "" on success, else what failed (tmp is then removed).
std::string publish_file(const std::string& tmp, const std::string& path);

// A fresh temporary name next to `path` (`<path>.tmp.<pid>.<n>`), unique within this process.
std::string temporary_name(const std::string& path);

// Checks that a file can be written at `path` the way write_file_durably writes it: a temporary
// is created, written, synced and removed in its folder. Throws UserError
// "error: <what>: cannot write in folder '<folder>': <why>" (or "... is a folder").
void check_writable(const std::string& path, std::string_view what);

// Low-level steps, each returning 0 or the errno of the failing call.
int write_all(int fd, std::string_view bytes);  // retries partial writes and EINTR
int sync_path(const std::string& path);         // fsync()s a file opened read-only for it
int sync_parent_dir(const std::string& path);   // fsync()s the folder holding `path`

}  // namespace ts

// Error types shared by every library. UserError is bad input (a kernel, a job, an argument):
// it carries where the mistake is and reads as `file:line:col: error: what`. InternalError is a
// broken invariant inside tilesweep: a bug, never the user's fault.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace ts {

// A position in an input file; line and col are 1-based, 0 means "unknown".
struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;

  bool known() const { return !file.empty(); }
};

class UserError : public std::runtime_error {
 public:
  explicit UserError(std::string message)
      : std::runtime_error(message), message_(std::move(message)) {}
  UserError(SourceLoc loc, std::string message);

  const SourceLoc& loc() const { return loc_; }
  // The message without the location prefix.
  const std::string& message() const { return message_; }

 private:
  SourceLoc loc_;
  std::string message_;
};

class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& message)
      : std::logic_error("internal error: " + message) {}
};

// Formats `file:line:col` (or `file:line`, or `file`) for messages.
std::string format_loc(const SourceLoc& loc);

template <typename... Args>
[[noreturn]] void fail(const SourceLoc& loc, fmt::format_string<Args...> f, Args&&... args) {
  throw UserError(loc, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace ts

// Checks an internal invariant; failure is a tilesweep bug, reported as InternalError.
#define TS_CHECK(cond, ...)                                                                     \
  do {                                                                                          \
    if (!(cond))                                                                                \
      throw ::ts::InternalError(fmt::format("{}:{}: check '{}' failed: {}", __FILE__, __LINE__, \
                                            #cond, fmt::format(__VA_ARGS__)));                  \
  } while (0)

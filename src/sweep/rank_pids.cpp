#include "tilesweep/sweep/rank_pids.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <map>
#include <sstream>

namespace ts::sweep {

std::string pids_path(const std::string& archive) { return archive + ".pids"; }

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

std::string rank_pid_line(int rank) {
  return fmt::format("{} {} {}\n", rank, host_name(), static_cast<long>(getpid()));
}

std::vector<RankPid> parse_rank_pids(const std::string& text) {
  std::vector<RankPid> out;
  std::istringstream in(text);
  RankPid r;
  while (in >> r.rank >> r.host >> r.pid) out.push_back(r);
  return out;
}

std::string interrupt_command(const std::vector<RankPid>& ranks, const std::string& this_host) {
  std::map<std::string, std::vector<long>> by_host;
  std::vector<std::string> hosts;
  for (const auto& r : ranks) {
    if (!by_host.count(r.host)) hosts.push_back(r.host);
    by_host[r.host].push_back(r.pid);
  }
  if (hosts.size() == 1 && hosts[0] == this_host)
    return fmt::format("kill -INT {}", fmt::join(by_host[hosts[0]], " "));
  std::vector<std::string> parts;
  for (const auto& h : hosts)
    parts.push_back(fmt::format("ssh {} kill -INT {}", h, fmt::join(by_host[h], " ")));
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace ts::sweep

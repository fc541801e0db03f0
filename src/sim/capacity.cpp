#include "tilesweep/sim/capacity.h"

#include <fmt/format.h>

namespace ts::sim {

namespace {

// Sizes in KiB for messages: "260 KiB", "207.5 KiB".
std::string kib(std::int64_t bytes) {
  double k = static_cast<double>(bytes) / 1024.0;
  std::string s = fmt::format("{:.1f}", k);
  if (s.size() > 2 && s.substr(s.size() - 2) == ".0") s.resize(s.size() - 2);
  return s + " KiB";
}

// "needs X, Y usable", in bytes when both round to the same KiB text.
std::string need_have(std::int64_t need, std::int64_t have, const char* what) {
  if (kib(need) != kib(have))
    return fmt::format("needs {} per partition, {} {}", kib(need), kib(have), what);
  return fmt::format("needs {} bytes per partition, {} {}", need, have, what);
}

std::string partition_check(const lower::Program& p, const target::Target& t) {
  for (const auto& b : p.buffers) {
    if (b.memory == sem::Memory::Hbm || b.shape.empty()) continue;
    int limit = b.memory == sem::Memory::Sbuf ? t.sbuf.partitions : t.psum.partitions;
    if (b.shape.front() > limit)
      return fmt::format("buffer '{}' spans {} partitions, {} has {}", b.name, b.shape.front(),
                         b.memory == sem::Memory::Sbuf ? "SBUF" : "PSUM", limit);
  }
  return {};
}

}  // namespace

Capacity check_capacity(const lower::Program& p, const target::Target& t) {
  Capacity c;
  c.reason = partition_check(p, t);
  if (!c.reason.empty()) return c;
  // Loop nests run one after another: their buffers share the memory (lower::on_chip_use).
  lower::OnChipUse u = lower::on_chip_use(p, t.psum.bank_bytes);
  c.sbuf_bytes = u.sbuf_bytes;
  c.psum_bytes = u.psum_bytes;
  c.psum_banks = u.psum_banks;
  if (c.sbuf_bytes > t.sbuf.usable_bytes_per_partition) {
    c.reason = "SBUF " + need_have(c.sbuf_bytes, t.sbuf.usable_bytes_per_partition, "usable");
    return c;
  }
  if (c.psum_banks > t.psum.banks)
    c.reason = fmt::format("PSUM needs {} banks, {} available", c.psum_banks, t.psum.banks);
  return c;
}

}  // namespace ts::sim

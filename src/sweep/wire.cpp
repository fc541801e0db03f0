#include "tilesweep/sweep/wire.h"

#include <cstring>
#include <type_traits>

#include "tilesweep/base/error.h"

namespace ts::sweep {

namespace {

struct Writer {
  std::string out;
  template <typename T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(const std::string& s) {
    pod(static_cast<std::uint64_t>(s.size()));
    out.append(s);
  }
};

struct Reader {
  std::string_view in;
  template <typename T>
  void pod(T& v) {
    if (in.size() < sizeof v) throw InternalError("decode_unit: truncated message");
    std::memcpy(&v, in.data(), sizeof v);
    in.remove_prefix(sizeof v);
  }
  void str(std::string& s) {
    std::uint64_t n = 0;
    pod(n);
    if (in.size() < n) throw InternalError("decode_unit: truncated string");
    s.assign(in.substr(0, n));
    in.remove_prefix(n);
  }
};

// One field list for both directions.
template <typename IO, typename P>
void progress_fields(IO& io, P& p) {
  io.pod(p.unit), io.str(p.kernel), io.str(p.target), io.str(p.shape), io.str(p.mesh),
      io.str(p.sharding);
  io.pod(p.first), io.pod(p.count), io.pod(p.rank), io.pod(p.seconds), io.pod(p.candidates);
}

template <typename IO, typename R>
void candidate_fields(IO& io, R& r) {
  io.str(r.kernel), io.str(r.target), io.str(r.shape), io.str(r.mesh), io.str(r.sharding),
      io.pod(r.variant);
  io.pod(r.choice), io.str(r.config), io.pod(r.feasible), io.str(r.reason), io.pod(r.latency_ns),
      io.pod(r.compute_ns);
  io.pod(r.roofline_ns);
  io.pod(r.busy_ns), io.pod(r.hbm_read_bytes), io.pod(r.hbm_write_bytes), io.pod(r.sbuf_peak_bytes);
  io.pod(r.psum_peak_bytes), io.pod(r.spill_bytes), io.pod(r.collective_ns), io.pod(r.check),
      io.pod(r.rank);
  io.pod(r.index), io.pod(r.unit);
}

}  // namespace

std::string encode_unit(const store::UnitResult& u) {
  Writer w;
  progress_fields(w, u.progress);
  w.pod(static_cast<std::uint64_t>(u.candidates.size()));
  for (const auto& r : u.candidates) candidate_fields(w, r);
  return std::move(w.out);
}

store::UnitResult decode_unit(std::string_view bytes) {
  Reader r{bytes};
  store::UnitResult u;
  progress_fields(r, u.progress);
  std::uint64_t n = 0;
  r.pod(n);
  if (n > bytes.size()) throw InternalError("decode_unit: bad row count");
  u.candidates.resize(n);
  for (auto& c : u.candidates) candidate_fields(r, c);
  if (!r.in.empty()) throw InternalError("decode_unit: trailing bytes");
  return u;
}

}  // namespace ts::sweep

#include "journal_codec.h"

#include <bit>
#include <cstring>
#include <type_traits>

#include "columns.h"
#include "tilesweep/base/hash.h"

namespace ts::store::detail {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the journal codec assumes little-endian");

class Writer {
 public:
  template <class T>
  void num(T v) {
    static_assert(std::is_arithmetic_v<T>);
    char b[sizeof v];
    std::memcpy(b, &v, sizeof v);
    out_.append(b, sizeof v);
  }
  void text(const std::string& s) {
    num<std::uint64_t>(s.size());
    out_ += s;
  }
  template <class Rec>
  void record(const Rec& rec) {
    for (const auto& col : Table<Rec>::columns())
      visit_value(col, rec, [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>)
          text(v);
        else if constexpr (std::is_same_v<V, bool>)
          num<std::uint8_t>(v ? 1 : 0);
        else
          num(v);
      });
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <class T>
  T num() {
    T v;
    std::memcpy(&v, take(sizeof v).data(), sizeof v);
    return v;
  }
  std::string text() { return std::string(take(count(1))); }
  // A count of items of at least `min_bytes` each, checked against what is left.
  std::uint64_t count(std::uint64_t min_bytes) {
    auto n = num<std::uint64_t>();
    if (n > in_.size() / min_bytes) throw DecodeError("a length runs past the end of its frame");
    return n;
  }
  template <class Rec>
  Rec record() {
    Rec rec;
    for (const auto& col : Table<Rec>::columns())
      visit_value(col, rec, [&](auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>)
          v = text();
        else if constexpr (std::is_same_v<V, bool>)
          v = num<std::uint8_t>() != 0;
        else
          v = num<V>();
      });
    return rec;
  }
  void finish() const {
    if (!in_.empty()) throw DecodeError("a frame has bytes left over after its records");
  }

 private:
  std::string_view take(std::size_t n) {
    if (n > in_.size()) throw DecodeError("a frame ends in the middle of a value");
    auto s = in_.substr(0, n);
    in_.remove_prefix(n);
    return s;
  }
  std::string_view in_;
};

}  // namespace

std::string make_frame(FrameKind kind, std::string_view payload) {
  Writer w;
  w.num<std::uint32_t>(0);  // placeholder for the magic, overwritten below
  w.num(static_cast<std::uint32_t>(kind));
  w.num<std::uint64_t>(payload.size());
  std::string frame = w.take();
  frame.replace(0, 4, kFrameMagic);
  std::uint64_t sum = hash_bytes(payload, hash_bytes(frame));
  char b[8];
  std::memcpy(b, &sum, 8);
  frame.append(b, 8);
  frame += payload;
  return frame;
}

std::optional<FrameHead> parse_head(std::string_view head) {
  if (head.size() < kFrameHeadBytes || head.substr(0, 4) != kFrameMagic) return std::nullopt;
  Reader r(head.substr(4, kFrameHeadBytes - 4));
  FrameHead h;
  h.kind = r.num<std::uint32_t>();
  h.length = r.num<std::uint64_t>();
  h.checksum = r.num<std::uint64_t>();
  return h;
}

bool checksum_ok(std::string_view head, std::string_view payload, std::uint64_t checksum) {
  return hash_bytes(payload, hash_bytes(head.substr(0, 16))) == checksum;
}

std::string encode_header(const JournalHeader& header) {
  Writer w;
  w.num(header.journal_version);
  w.num(header.schema_version);
  w.text(header.job_hash);
  return w.take();
}

JournalHeader decode_header(std::string_view payload) {
  Reader r(payload);
  JournalHeader h;
  h.journal_version = r.num<std::uint32_t>();
  h.schema_version = r.num<std::int64_t>();
  h.job_hash = r.text();
  r.finish();
  return h;
}

std::string encode_unit(const UnitResult& unit) {
  Writer w;
  w.record(unit.progress);
  w.num<std::uint64_t>(unit.candidates.size());
  for (const auto& c : unit.candidates) w.record(c);
  return w.take();
}

UnitResult decode_unit(std::string_view payload) {
  Reader r(payload);
  UnitResult u;
  u.progress = r.record<ProgressRecord>();
  u.candidates.resize(r.count(1));
  for (auto& c : u.candidates) c = r.record<CandidateRecord>();
  r.finish();
  return u;
}

std::string encode_proofs(std::span<const ProofRecord> proofs) {
  Writer w;
  w.num<std::uint64_t>(proofs.size());
  for (const auto& p : proofs) w.record(p);
  return w.take();
}

std::vector<ProofRecord> decode_proofs(std::string_view payload) {
  Reader r(payload);
  std::vector<ProofRecord> out(r.count(1));
  for (auto& p : out) p = r.record<ProofRecord>();
  r.finish();
  return out;
}

}  // namespace ts::store::detail

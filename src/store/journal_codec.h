// The journal's binary frames and payloads (internal to the store; format in journal.h and
// results/README.md). Records are encoded column by column from columns.h, little-endian:
// strings as u64 length + bytes, bool and int8 as one byte, int32 as 4, int64 and float64 as 8.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tilesweep/store/journal.h"

namespace ts::store::detail {

inline constexpr std::string_view kFrameMagic = "TSJ1";
inline constexpr std::size_t kFrameHeadBytes = 24;
// 2: the header frame is written twice, so one damaged copy still names the job (version 1
// journals, with one header, are still read).
inline constexpr std::uint32_t kJournalVersion = 2;
inline constexpr std::uint32_t kOldestJournalVersion = 1;

enum class FrameKind : std::uint32_t { Header = 1, Unit = 2, Proofs = 3 };

struct FrameHead {
  std::uint32_t kind = 0;
  std::uint64_t length = 0;    // payload bytes
  std::uint64_t checksum = 0;  // FNV-1a 64 of the 16 bytes before it, then the payload
};

// The complete frame: head and payload, ready for one write().
std::string make_frame(FrameKind kind, std::string_view payload);
// Parses kFrameHeadBytes bytes; nullopt when the magic is wrong.
std::optional<FrameHead> parse_head(std::string_view head);
bool checksum_ok(std::string_view head, std::string_view payload, std::uint64_t checksum);

// A payload whose checksum is right but whose content does not decode.
class DecodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct JournalHeader {
  std::uint32_t journal_version = kJournalVersion;
  std::int64_t schema_version = kSchemaVersion;
  std::string job_hash;
};

std::string encode_header(const JournalHeader& header);
JournalHeader decode_header(std::string_view payload);
std::string encode_unit(const UnitResult& unit);
UnitResult decode_unit(std::string_view payload);
std::string encode_proofs(std::span<const ProofRecord> proofs);
std::vector<ProofRecord> decode_proofs(std::string_view payload);

}  // namespace ts::store::detail

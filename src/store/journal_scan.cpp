#include "journal_scan.h"

#include <optional>

#include "journal_codec.h"

namespace ts::store::detail {
namespace {

std::optional<ScannedFrame> frame_at(std::string_view bytes, std::size_t pos) {
  if (bytes.size() - pos < kFrameHeadBytes) return std::nullopt;
  std::string_view head = bytes.substr(pos, kFrameHeadBytes);
  auto fh = parse_head(head);
  if (!fh || fh->length > bytes.size() - pos - kFrameHeadBytes) return std::nullopt;
  std::string_view payload = bytes.substr(pos + kFrameHeadBytes, fh->length);
  if (!checksum_ok(head, payload, fh->checksum)) return std::nullopt;
  return ScannedFrame{static_cast<std::int64_t>(pos), fh->kind, payload};
}

// The first whole frame starting after `pos`, or bytes.size().
std::size_t next_frame(std::string_view bytes, std::size_t pos) {
  for (std::size_t at = bytes.find(kFrameMagic, pos + 1); at != std::string_view::npos;
       at = bytes.find(kFrameMagic, at + 1))
    if (frame_at(bytes, at)) return at;
  return bytes.size();
}

DamagedRegion describe(std::string_view bytes, std::size_t begin, std::size_t end) {
  DamagedRegion r{static_cast<std::int64_t>(begin), static_cast<std::int64_t>(end)};
  std::string_view region = bytes.substr(begin, end - begin);
  bool starts_with_head = false;
  for (std::size_t at = region.find(kFrameMagic); at != std::string_view::npos;
       at = region.find(kFrameMagic, at + 1)) {
    starts_with_head = starts_with_head || at == 0;
    ++r.frames;
    auto fh = parse_head(bytes.substr(begin + at, std::min(kFrameHeadBytes, region.size() - at)));
    if (!fh || fh->kind != static_cast<std::uint32_t>(FrameKind::Header)) ++r.units;
  }
  if (!starts_with_head) ++r.frames, ++r.units;  // its head itself is damaged
  if (end == bytes.size()) {
    // Torn: a frame that starts well but runs past the end, or a prefix of a frame head.
    auto fh = parse_head(region.substr(0, std::min(kFrameHeadBytes, region.size())));
    r.torn = r.frames == 1 &&
             ((fh && fh->length > region.size() - kFrameHeadBytes) ||
              (region.size() < kFrameHeadBytes && kFrameMagic.starts_with(region.substr(0, 4))));
  }
  return r;
}

}  // namespace

FrameScan scan_frames(std::string_view bytes) {
  FrameScan scan;
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    if (auto f = frame_at(bytes, pos)) {
      scan.frames.push_back(*f);
      pos += kFrameHeadBytes + f->payload.size();
      continue;
    }
    std::size_t next = next_frame(bytes, pos);
    scan.damaged.push_back(describe(bytes, pos, next));
    pos = next;
  }
  return scan;
}

}  // namespace ts::store::detail

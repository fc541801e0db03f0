// Finding the frames of a journal's bytes, damaged or not (internal to the store). A frame is
// whole when its head parses, its length fits in the file and its checksum matches. Bytes that
// are not part of a whole frame form a damaged region, and scanning resynchronises on the next
// whole frame after it (the next "TSJ1" that starts one), so damage in the middle of a journal
// loses only the frames it touched, never the valid ones after it.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace ts::store::detail {

struct ScannedFrame {
  std::int64_t offset = 0;
  std::uint32_t kind = 0;
  std::string_view payload;  // into the scanned bytes
};

// Bytes [begin, end) that hold no whole frame.
struct DamagedRegion {
  std::int64_t begin = 0, end = 0;
  std::int64_t frames = 0;  // frame starts seen in it (at least 1)
  std::int64_t units = 0;   // of which unit frames, or frames whose kind is unreadable
  bool torn = false;        // the file's last frame, cut short (a write interrupted by a crash)
};

struct FrameScan {
  std::vector<ScannedFrame> frames;    // file order
  std::vector<DamagedRegion> damaged;  // file order
};

FrameScan scan_frames(std::string_view bytes);

}  // namespace ts::store::detail

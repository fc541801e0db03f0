#include <algorithm>
#include <cmath>

#include "core_state.h"

namespace ts::sim {

DmaEngines::DmaEngines(int engines)
    : n_(std::max(1, engines)), engines_(static_cast<std::size_t>(n_)) {}

void DmaEngines::busy_after(int first, int count, double t) {
  busy_.clear();
  // The engines' lists are read once when they are all alike (every engine of the span equal
  // to the first: a transfer may start on an engine a narrower one still holds).
  const Engine& head = engines_[first % n_];
  bool alike = true;
  for (int k = 1; k < count && alike && !uniform_; ++k) {
    const Engine& e = engines_[(first + k) % n_];
    alike = e.count == head.count &&
            std::equal(head.busy.begin(), head.busy.begin() + head.count, e.busy.begin());
  }
  for (int k = 0; k < (alike ? 1 : count); ++k) {
    const Engine& e = engines_[(first + k) % n_];
    for (int i = 0; i < e.count; ++i)
      if (e.busy[i].second > t) busy_.push_back(e.busy[i]);
  }
  if (!alike) std::sort(busy_.begin(), busy_.end());
}

std::pair<double, double> DmaEngines::reserve(double ready, int first, int count, double duration,
                                              std::uint64_t seq) {
  if (uniform_ && count < n_) {  // the first transfer on part of the engines: give each its copy
    std::fill(engines_.begin() + 1, engines_.end(), engines_[0]);
    uniform_ = false;
  }
  if (uniform_) first = 0;
  double t = ready;
  for (int k = 0; k < (uniform_ ? 1 : count); ++k)
    t = std::max(t, engines_[(first + k) % n_].floor);
  busy_after(first, count, t);
  pieces_.clear();
  double left = duration, cur = t;
  constexpr double kMinPiece = 1e-3;  // ns: gaps shorter than this are not worth a piece
  for (const auto& [s, e] : busy_) {
    if (s - cur > kMinPiece) {
      bool fits = left < s - cur;
      pieces_.emplace_back(cur, fits ? cur + left : s);
      left = fits ? 0 : left - (s - cur);
      if (left <= 0) break;
    }
    cur = std::max(cur, e);
  }
  if (left > 0) pieces_.emplace_back(cur, cur + left);
  for (int k = 0; k < (uniform_ ? 1 : count); ++k) {
    Engine& e = engines_[(first + k) % n_];
    for (const auto& [s, end] : pieces_) insert(e, s, end);
    e.seq = seq;
  }
  return {pieces_.front().first, pieces_.back().second};
}

void DmaEngines::insert(Engine& e, double start, double end) {
  int i = static_cast<int>(
      std::lower_bound(e.busy.begin(), e.busy.begin() + e.count, Stretch{start, end}) -
      e.busy.begin());
  std::copy_backward(e.busy.begin() + i, e.busy.begin() + e.count, e.busy.begin() + e.count + 1);
  e.busy[i] = {start, end};
  ++e.count;
  auto erase = [&](int at) {
    std::copy(e.busy.begin() + at + 1, e.busy.begin() + e.count, e.busy.begin() + at);
    --e.count;
  };
  // Merge with touching neighbours (back-to-back transfers form one busy stretch).
  auto touch = [](double a_end, double b_start) {
    return b_start <= a_end + 1e-12 * std::abs(a_end) + 1e-9;
  };
  if (i + 1 < e.count && touch(e.busy[i].second, e.busy[i + 1].first)) {
    e.busy[i].second = std::max(e.busy[i].second, e.busy[i + 1].second);
    erase(i + 1);
  }
  if (i > 0 && touch(e.busy[i - 1].second, e.busy[i].first)) {
    e.busy[i - 1].second = std::max(e.busy[i - 1].second, e.busy[i].second);
    erase(i);
  }
  if (e.count > kKept) {
    e.floor = std::max(e.floor, e.busy[0].second);
    erase(0);
  }
}

void DmaEngines::append_engine(std::vector<double>& out, const Engine& e, std::uint64_t seq0,
                               double ref) const {
  if (e.seq <= seq0) {
    out.push_back(kStale);
    return;
  }
  out.push_back(e.floor == kNever ? kUnset : e.floor - ref);
  // Every kept stretch, the latest first: a later transfer may fill a gap however long ago it
  // opened (loads that ran ahead leave one their successors cannot use), so two snapshots match
  // only when all their gaps do (a boundary older than the horizon in both still counts as equal).
  for (int k = 0; k < kKept; ++k) {
    bool has = k < e.count;
    out.push_back(has ? e.busy[e.count - 1 - k].first - ref : kUnset);
    out.push_back(has ? e.busy[e.count - 1 - k].second - ref : kUnset);
  }
}

void DmaEngines::append_state(std::vector<double>& out, std::int64_t rotation, std::uint64_t seq0,
                              double ref) const {
  out.push_back(uniform_ ? 1.0 : 0.0);
  if (uniform_) return append_engine(out, engines_[0], seq0, ref);
  for (std::int64_t j = 0; j < n_; ++j)
    append_engine(out, engines_[static_cast<std::size_t>((rotation + j) % n_)], seq0, ref);
}

void DmaEngines::shift(double delta, std::uint64_t seq0, std::int64_t by) {
  for (int k = 0; k < (uniform_ ? 1 : n_); ++k) {
    Engine& e = engines_[k];
    if (e.seq <= seq0) continue;
    if (e.floor != kNever) e.floor += delta;
    for (int i = 0; i < e.count; ++i) {
      e.busy[i].first += delta;
      e.busy[i].second += delta;
    }
    // The skipped periods kept the engine as busy as the simulated ones: no time before its
    // moved stretches is free (moving the first stretch's start would open a gap that never was).
    if (e.count > 0) e.floor = std::max(e.floor, e.busy[0].first);
  }
  if (uniform_) return;
  std::int64_t r = ((by % n_) + n_) % n_;
  std::rotate(engines_.begin(), engines_.end() - r, engines_.end());
}

}  // namespace ts::sim

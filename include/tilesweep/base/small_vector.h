// A vector that keeps its first N elements inline and goes to the heap only beyond them. A
// candidate Program is built by the million and is made of many short lists (an instruction's
// operands and windows, a window's loop terms, a DMA's per-dim extents): as std::vectors they
// were most of its allocations. The interface is the part of std::vector the project uses.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace ts {

template <class T, std::size_t N>
class SmallVector {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using iterator = T*;
  using const_iterator = const T*;
  using reference = T&;
  using const_reference = const T&;

  SmallVector() = default;
  SmallVector(std::initializer_list<T> items) { append(items.begin(), items.end()); }
  SmallVector(std::size_t n, const T& value) { assign(n, value); }
  template <class It>
  requires(!std::is_integral_v<It>) SmallVector(It first, It last) { append(first, last); }
  template <class U, class A>
  SmallVector(const std::vector<U, A>& v) {  // NOLINT: converts like a std::vector would be copied
    reserve(v.size());
    for (const auto& x : v) emplace_back(x);
  }
  SmallVector(const SmallVector& o) { append(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { take(std::move(o)); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) {
      clear();
      append(o.begin(), o.end());
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      clear();
      release();
      take(std::move(o));
    }
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> items) {
    clear();
    append(items.begin(), items.end());
    return *this;
  }
  ~SmallVector() {
    clear();
    release();
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T& front() { return data_[0]; }
  const T& front() const { return data_[0]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }

  void reserve(std::size_t n) {
    if (n > cap_) grow(n);
  }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == cap_) {  // the arguments may refer to an element: build the new one first
      T fresh(std::forward<Args>(args)...);
      grow(2 * cap_);
      return *::new (static_cast<void*>(data_ + size_++)) T(std::move(fresh));
    }
    return *::new (static_cast<void*>(data_ + size_++)) T(std::forward<Args>(args)...);
  }
  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  void clear() {
    std::destroy(data_, data_ + size_);
    size_ = 0;
  }
  void assign(std::size_t n, const T& value) {
    clear();
    reserve(n);
    for (std::size_t i = 0; i < n; ++i) emplace_back(value);
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  T* inline_data() { return reinterpret_cast<T*>(inline_); }
  bool on_heap() const { return data_ != reinterpret_cast<const T*>(inline_); }

  template <class It>
  void append(It first, It last) {
    reserve(size_ + static_cast<std::size_t>(std::distance(first, last)));
    for (; first != last; ++first) emplace_back(*first);
  }
  void grow(std::size_t n) {
    n = std::max<std::size_t>(n, N + 1);
    T* fresh = static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(alignof(T))));
    std::uninitialized_move(data_, data_ + size_, fresh);
    std::destroy(data_, data_ + size_);
    release();
    data_ = fresh;
    cap_ = n;
  }
  // Frees the heap block (elements already destroyed); back to the inline storage.
  void release() {
    if (on_heap()) ::operator delete(data_, std::align_val_t(alignof(T)));
    data_ = inline_data();
    cap_ = N;
  }
  // Takes o's elements (this one empty, inline); leaves o empty.
  void take(SmallVector&& o) {
    if (o.on_heap()) {
      data_ = o.data_;
      size_ = o.size_;
      cap_ = o.cap_;
      o.data_ = o.inline_data();
      o.size_ = 0;
      o.cap_ = N;
      return;
    }
    std::uninitialized_move(o.data_, o.data_ + o.size_, data_);
    size_ = o.size_;
    o.clear();
  }

  alignas(T) unsigned char inline_[N * sizeof(T)];
  T* data_ = inline_data();
  std::size_t size_ = 0, cap_ = N;
};

}  // namespace ts

#pragma once
// A read-only array whose elements live in a vector moved into it or in a file mapping
// (io::SafetensorsReader::map): what a golden case holds for its multi-GB tensors, so that a
// judging command can use the file's bytes where they are instead of copying them. Copies share
// the elements (they never change), so copying is cheap and means the same as a deep copy.
#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace mlacheck::io {

template <class T>
class SharedArray {
 public:
  SharedArray() = default;
  // Takes the vector's elements (implicit: a std::vector<T> is accepted wherever one was).
  SharedArray(std::vector<T> values) {  // NOLINT(google-explicit-constructor)
    auto held = std::make_shared<const std::vector<T>>(std::move(values));
    view_ = std::span<const T>(*held);
    owner_ = std::move(held);
  }
  // Elements that `owner` keeps alive (a mapping).
  SharedArray(std::span<const T> view, std::shared_ptr<const void> owner)
      : view_(view), owner_(std::move(owner)) {}

  const T* data() const { return view_.data(); }
  std::size_t size() const { return view_.size(); }
  bool empty() const { return view_.empty(); }
  const T& operator[](std::size_t i) const { return view_[i]; }
  const T* begin() const { return view_.data(); }
  const T* end() const { return view_.data() + view_.size(); }
  operator std::span<const T>() const { return view_; }  // NOLINT(google-explicit-constructor)

 private:
  std::span<const T> view_;
  std::shared_ptr<const void> owner_;
};

}  // namespace mlacheck::io

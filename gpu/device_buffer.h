#pragma once
// Owning device allocation for host-side launch code: freed on every path, including the
// exceptions that MLACHECK_GPU_CHECK throws.
#include <cstddef>
#include <utility>
#include <vector>

#include "gpu/platform.h"

namespace mlacheck::gpu {

template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) MLACHECK_GPU_CHECK(hipMalloc(&ptr_, bytes()));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
    if (count_ > 0)
      MLACHECK_GPU_CHECK(hipMemcpy(ptr_, host.data(), bytes(), hipMemcpyHostToDevice));
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) static_cast<void>(hipFree(ptr_));  // no throwing from a destructor
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(count_, other.count_);
    return *this;
  }

  T* get() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }

  // Sets every byte to `byte`: outputs are poisoned before a kernel runs, so that an element the
  // kernel never writes cannot pass for a right answer.
  void fill_bytes(unsigned char byte) {
    if (count_ > 0) MLACHECK_GPU_CHECK(hipMemset(ptr_, byte, bytes()));
  }

  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0)
      MLACHECK_GPU_CHECK(hipMemcpy(host.data(), ptr_, bytes(), hipMemcpyDeviceToHost));
    return host;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace mlacheck::gpu

// Buffers for the GPU backends: device memory, pinned host memory (mapped,
// so kernels reach it through the same pointer) and pageable host memory.
// They grow on demand and report, rather than throw, when memory runs out,
// so a size that does not fit is skipped and the sweep goes on. Plain C++:
// device and pinned memory come from the device layer (devices.hpp).
#pragma once

#include <cstddef>
#include <string>

#include "devices.hpp"

namespace fb::gpu {

class Buffer {
 public:
  Buffer() = default;
  Buffer(Devices& devices, MemoryKind kind, int device) : devices_(&devices), kind_(kind), device_(device) {}
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // Holds at least `bytes` afterwards, or returns why not (contents are not kept).
  // An empty string means success.
  [[nodiscard]] std::string grow(std::size_t bytes);
  void release();

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  MemoryKind kind() const { return kind_; }
  int device() const { return device_; }

 private:
  Devices* devices_ = nullptr;
  MemoryKind kind_ = MemoryKind::device;
  int device_ = 0;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace fb::gpu

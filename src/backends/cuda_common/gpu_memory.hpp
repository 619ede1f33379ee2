// Buffers for the GPU backends: device memory, pinned host memory (mapped,
// so kernels reach it through the same pointer) and pageable host memory.
// They grow on demand and report, rather than throw, when memory runs out,
// so a size that does not fit is skipped and the sweep goes on.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

namespace fb::gpu {

enum class MemoryKind { device, pinned, pageable };

class Buffer {
 public:
  Buffer() = default;
  Buffer(MemoryKind kind, int device) : kind_(kind), device_(device) {}
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // Holds at least `bytes` afterwards, or returns why not (contents are not kept).
  // An empty string means success.
  std::string grow(std::size_t bytes);
  void release();

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  MemoryKind kind() const { return kind_; }
  int device() const { return device_; }

 private:
  MemoryKind kind_ = MemoryKind::device;
  int device_ = 0;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// Makes `device` current for the lifetime of the guard.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

// "GPU 0 has 12.0 GiB free of 140.0 GiB" for messages about memory.
std::string device_memory_text(int device);

}  // namespace fb::gpu

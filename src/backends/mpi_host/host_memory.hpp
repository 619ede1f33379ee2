// Page-aligned host buffers, touched at allocation so page faults never land
// inside a timed iteration; and the node's available memory for fit checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace fb {

class HostBuffer {
 public:
  HostBuffer() = default;
  explicit HostBuffer(std::size_t bytes);
  void* data() const { return data_.get(); }
  std::size_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> data_;
  std::size_t bytes_ = 0;
};

// MemAvailable from `meminfo_path` in bytes; nullopt when it cannot be read.
std::optional<std::uint64_t> available_host_memory(const std::string& meminfo_path = "/proc/meminfo");

}  // namespace fb

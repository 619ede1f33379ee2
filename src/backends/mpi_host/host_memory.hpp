// Page-aligned host buffers, touched at allocation so page faults never land
// inside a timed iteration; and the memory this process may still take, for
// the fit check before a sweep.
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

// How much more host memory this process can take, and what sets the figure.
struct HostMemory {
  std::uint64_t bytes = 0;
  std::string source;  // "MemAvailable", or the cgroup folder whose limit binds
};

// The smaller of the node's MemAvailable and the headroom under this
// process's memory cgroup (v1 or v2, every ancestor up to the mount's root):
// limit minus what is in use, where page cache that can be dropped
// (inactive_file) does not count as in use. A job in a 3 GiB cgroup on a
// 24 GiB node has about 3 GiB, whatever MemAvailable says. `root` is "/" or a
// fixture tree holding proc/ and sys/. nullopt when neither can be read.
std::optional<HostMemory> available_host_memory(const std::string& root = "/");

// The rule of every backend with host buffers (mpi, and cuda's pinned and
// pageable copies): `need` bytes fit when they leave a tenth of what is
// available to the MPI library and the system.
inline bool fits_host_memory(std::uint64_t need, const HostMemory& available) {
  return need <= available.bytes / 10 * 9;
}

}  // namespace fb

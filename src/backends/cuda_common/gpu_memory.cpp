#include "gpu_memory.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <utility>

#include "cuda_common/gpu_backend.hpp"
#include "cuda_common/numa_policy.hpp"
#include "fabricbench/core/sizes.hpp"

namespace fb::gpu {
namespace {

// Large buffers start on a 2 MiB boundary, like the driver's own.
constexpr std::size_t kHostAlign = 2u << 20;

std::string kind_name(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::device:
      return "device";
    case MemoryKind::pinned:
      return "pinned host";
    case MemoryKind::pageable:
      return "pageable host";
  }
  return "?";
}

// The NUMA node of CUDA device `device` (-1 when the kernel does not say).
int numa_node_of_device(int device) {
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof(bus), device) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return numa_node_of_pci("/", bus);
}

}  // namespace

Buffer::~Buffer() { release(); }

Buffer::Buffer(Buffer&& other) noexcept
    : kind_(other.kind_), device_(other.device_), data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    kind_ = other.kind_;
    device_ = other.device_;
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void Buffer::release() {
  if (!data_) return;
  switch (kind_) {
    case MemoryKind::device: {
      DeviceGuard on(device_);
      cudaFree(data_);
      break;
    }
    case MemoryKind::pinned:
      cudaFreeHost(data_);
      break;
    case MemoryKind::pageable:
      std::free(data_);
      break;
  }
  data_ = nullptr;
  bytes_ = 0;
}

std::string Buffer::grow(std::size_t bytes) {
  if (bytes <= bytes_ && data_) return {};
  release();
  const std::size_t want = bytes == 0 ? 1 : bytes;
  cudaError_t rc = cudaSuccess;
  switch (kind_) {
    case MemoryKind::device: {
      DeviceGuard on(device_);
      // The guard cannot throw (it runs in destructors): a device it could
      // not make current would get the memory of whichever GPU is current.
      int now = -1;
      if (cudaGetDevice(&now) != cudaSuccess || now != device_) {
        cudaGetLastError();
        return fmt::format("cannot make GPU {} current to allocate {} on it", device_, format_bytes(want));
      }
      rc = cudaMalloc(&data_, want);
      break;
    }
    case MemoryKind::pinned: {
      // On the GPU's NUMA node: cudaHostAlloc pins the pages as this thread
      // allocates them, so its memory policy places them.
      const PreferNumaNode near(numa_node_of_device(device_));
      // Mapped and portable: kernels on any device read it through the same pointer.
      rc = cudaHostAlloc(&data_, want, cudaHostAllocMapped | cudaHostAllocPortable);
      break;
    }
    case MemoryKind::pageable: {
      data_ = std::aligned_alloc(kHostAlign, (want + kHostAlign - 1) / kHostAlign * kHostAlign);
      if (!data_) return fmt::format("cannot allocate {} of pageable host memory: {}", format_bytes(want),
                                     std::strerror(errno));
      // Every page touched now, not inside a timed copy, and so placed now:
      // on the GPU's NUMA node, not wherever this thread ran (issue 34, defect 5).
      const PreferNumaNode near(numa_node_of_device(device_));
      std::memset(data_, 0, want);
      break;
    }
  }
  if (rc != cudaSuccess) {
    data_ = nullptr;
    cudaGetLastError();  // an allocation failure is not sticky; clear it for the next call
    std::string text = fmt::format("cannot allocate {} of {} memory: {}", format_bytes(want), kind_name(kind_),
                                   cudaGetErrorString(rc));
    if (kind_ == MemoryKind::device) text += fmt::format(" ({})", device_memory_text(device_));
    return text;
  }
  bytes_ = want;
  return {};
}

DeviceGuard::DeviceGuard(int device) {
  cudaGetDevice(&previous_);
  // Best effort, never throws (it also runs in destructors): a failure shows in the next call.
  if (previous_ != device) cudaSetDevice(device);
}

DeviceGuard::~DeviceGuard() {
  int now = 0;
  cudaGetDevice(&now);
  if (now != previous_) cudaSetDevice(previous_);
}

std::string device_memory_text(int device) {
  DeviceGuard on(device);
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return fmt::format("GPU {}", device);
  return fmt::format("GPU {} has {} free of {}", device, format_bytes(free_bytes), format_bytes(total_bytes));
}

Support make_room(Buffer& in, Buffer& out, const OpSpec& spec) {
  const std::uint64_t bytes = std::max(spec.layout.in_elems, spec.layout.out_elems) * dtype_bytes(spec.dtype);
  std::string error = in.grow(bytes);
  if (error.empty()) error = out.grow(bytes);
  if (error.empty()) return Support::yes();
  in.release();
  out.release();
  return Support::no(fmt::format("{} does not fit in device memory: {}", format_bytes(bytes), error));
}

}  // namespace fb::gpu

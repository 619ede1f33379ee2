#include "gpu_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
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

// The NUMA node of the GPU (-1 when the kernel does not say).
int numa_node_of_device(Devices& devices, int device) {
  return numa_node_of_pci("/", devices.props(device).pci_bus_id);
}

}  // namespace

Buffer::~Buffer() { release(); }

Buffer::Buffer(Buffer&& other) noexcept
    : devices_(other.devices_),
      kind_(other.kind_),
      device_(other.device_),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    devices_ = other.devices_;
    kind_ = other.kind_;
    device_ = other.device_;
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void Buffer::release() {
  if (!data_) return;
  if (kind_ == MemoryKind::pageable)
    std::free(data_);
  else
    devices_->release(kind_, device_, data_);
  data_ = nullptr;
  bytes_ = 0;
}

std::string Buffer::grow(std::size_t bytes) {
  if (bytes <= bytes_ && data_) return {};
  release();
  const std::size_t want = bytes == 0 ? 1 : bytes;
  if (kind_ != MemoryKind::pageable && !devices_) throw std::logic_error("gpu::Buffer: no device layer");
  std::string error;
  switch (kind_) {
    case MemoryKind::device:
      error = devices_->allocate(kind_, device_, want, data_);
      break;
    case MemoryKind::pinned: {
      // On the GPU's NUMA node: the pages are pinned as this thread
      // allocates them, so its memory policy places them.
      const PreferNumaNode near(numa_node_of_device(*devices_, device_));
      error = devices_->allocate(kind_, device_, want, data_);
      break;
    }
    case MemoryKind::pageable: {
      data_ = std::aligned_alloc(kHostAlign, (want + kHostAlign - 1) / kHostAlign * kHostAlign);
      if (!data_) return fmt::format("cannot allocate {} of pageable host memory: {}", format_bytes(want),
                                     std::strerror(errno));
      // Every page touched now, not inside a timed copy, and so placed now:
      // on the GPU's NUMA node, not wherever this thread ran (issue 34, defect 5).
      const PreferNumaNode near(devices_ ? numa_node_of_device(*devices_, device_) : -1);
      std::memset(data_, 0, want);
      break;
    }
  }
  if (!error.empty()) {
    data_ = nullptr;
    std::string text = fmt::format("cannot allocate {} of {} memory: {}", format_bytes(want), kind_name(kind_), error);
    if (kind_ == MemoryKind::device) text += fmt::format(" ({})", devices_->memory_text(device_));
    return text;
  }
  bytes_ = want;
  return {};
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

// The device layer of the GPU backends: every call their logic makes on this
// process's GPUs (which it sees, their memory, streams, copies and the
// check's kernels), with no vendor type in sight. CudaDevices
// (cuda_devices.hpp) forwards each call to the CUDA runtime and checks its
// return code, deciding nothing; the host double of the tests
// (tests/support/sim_devices.hpp) simulates a node's GPUs in host memory, so
// the backends' own code (placement, buffers, copy paths, peer identity, path
// labels) runs multi-rank in CI, on CPU. Device indices are this process's
// own numbering (its CUDA_VISIBLE_DEVICES); a GPU's identity across processes
// is its PCI bus id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "device_queue.hpp"
#include "fabricbench/core/check_values.hpp"

namespace fb::gpu {

enum class MemoryKind { device, pinned, pageable };

// The direction a copy is queued as (cudaMemcpyKind's four that the backends use).
enum class CopyKind { host_to_device, device_to_host, device_to_device, any };

struct DeviceProps {
  std::string name;
  std::string pci_bus_id;  // "0000:18:00.0"
  std::uint64_t memory_bytes = 0;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
};

// One in-order stream of one device. Work is queued, not waited for, unless
// the call says so.
class DeviceStream {
 public:
  virtual ~DeviceStream() = default;
  // A queue on this stream for StreamTimer: its events and graph are its
  // own. With `poll`, its waits query the event and call `poll` between
  // queries (NCCL's waits: an abort or an asynchronous error ends them).
  virtual std::unique_ptr<DeviceQueue> timing_queue(std::function<void()> poll = {}) = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) = 0;
  // From this stream's device to `dst` on `dst_device` (the copy goes over
  // P2P where peer access is on, through the host where it is off).
  virtual void copy_peer(void* dst, int dst_device, const void* src, std::size_t bytes) = 0;
  // A device-local copy by the SMs (16-byte aligned), `sm_count` SMs' worth of blocks.
  virtual void sm_copy(void* dst, const void* src, std::size_t bytes, int sm_count) = 0;
  virtual void launch_empty_kernel() = 0;
  // Work queued here from now on starts after everything queued on `other`
  // so far (an event recorded there and waited for here; a capture on
  // `other` takes this stream in, as CUDA's does).
  virtual void wait_for(DeviceStream& other) = 0;
  // Returns when everything queued so far has completed.
  virtual void synchronize() = 0;
  // A mark after everything queued so far, and whether the device has passed
  // it: a wait that polls between queries (see timing_queue).
  virtual void mark() = 0;
  virtual bool mark_passed() = 0;
};

class Devices {
 public:
  virtual ~Devices() = default;

  // The host double of the tests (sim_devices.hpp): records say their figures are simulated.
  virtual bool simulated() const { return false; }

  // "" when this process can use a device; otherwise why not (no usable
  // driver, no device), with the host named.
  [[nodiscard]] virtual std::string absent_reason() = 0;
  // The runtime and driver, as the backends' version() says them.
  virtual std::string version() = 0;
  virtual int count() = 0;
  // Makes `device` current on this thread; "" or why it could not.
  [[nodiscard]] virtual std::string make_current(int device) = 0;
  // The device current on this thread; -1 when it cannot be read.
  virtual int current_device() = 0;
  virtual DeviceProps props(int device) = 0;
  // This process's index of the GPU at PCI `bus_id`; -1 when it does not see it.
  virtual int by_bus_id(const std::string& bus_id) = 0;
  virtual bool can_access_peer(int device, int peer) = 0;
  // Peer access from `device` to `peer`, on or off (already so is no error).
  virtual void set_peer_access(int device, int peer, bool on) = 0;

  // Device or pinned (mapped, portable) host memory: "" with `data` set, or
  // the runtime's reason with `data` null. (Pageable memory is the Buffer's.)
  [[nodiscard]] virtual std::string allocate(MemoryKind kind, int device, std::size_t bytes, void*& data) = 0;
  virtual void release(MemoryKind kind, int device, void* data) noexcept = 0;
  // "GPU 0 has 12.0 GiB free of 140.0 GiB", for messages about memory.
  virtual std::string memory_text(int device) = 0;

  virtual std::unique_ptr<DeviceStream> make_stream(int device) = 0;
  // Between any two memories this process reaches; returns when done.
  virtual void copy_now(void* dst, const void* src, std::size_t bytes, int device) = 0;

  // The check on `device` (check_values.hpp's patterns), each complete when
  // it returns; the pointers are device or pinned memory.
  virtual void fill_input(int device, const CheckContext& ctx, void* in) = 0;
  virtual void poison(int device, void* out, std::size_t bytes) = 0;
  virtual std::uint64_t count_wrong(int device, const CheckContext& ctx, const void* out) = 0;
  // Flips a high bit of element `index`, for fault-injection tests.
  virtual void corrupt_element(int device, Dtype dtype, void* out, std::uint64_t index) = 0;
};

}  // namespace fb::gpu

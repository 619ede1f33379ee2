#include "cuda_devices.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "copy_kernels.hpp"
#include "cuda_queue.hpp"
#include "cuda_stream.hpp"
#include "device_check.hpp"
#include "fabricbench/core/sizes.hpp"
#include "gpu_backends.hpp"
#include "gpu_error.hpp"

namespace fb::gpu {
namespace {

cudaMemcpyKind cuda_kind(CopyKind kind) {
  switch (kind) {
    case CopyKind::host_to_device:
      return cudaMemcpyHostToDevice;
    case CopyKind::device_to_host:
      return cudaMemcpyDeviceToHost;
    case CopyKind::device_to_device:
      return cudaMemcpyDeviceToDevice;
    case CopyKind::any:
      return cudaMemcpyDefault;
  }
  return cudaMemcpyDefault;
}

std::string probe() {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  const std::string detail =
      rc == cudaSuccess ? ""
                        : fmt::format(" (cudaGetDeviceCount: {}: {})", cudaGetErrorName(rc), cudaGetErrorString(rc));
  if (rc == cudaErrorInsufficientDriver)
    return fmt::format("no usable NVIDIA driver on host {}{}", host_name(), detail);
  if (rc == cudaErrorNoDevice || (rc == cudaSuccess && count == 0))
    return fmt::format("no CUDA device on host {}{}", host_name(), detail);
  if (rc != cudaSuccess) return fmt::format("CUDA is not usable on host {}{}", host_name(), detail);
  return {};
}

std::string cuda_version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

class CudaStream final : public DeviceStream {
 public:
  explicit CudaStream(int device) : device_(device) {
    DeviceGuard on(device);
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", device);
    check(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming), "cudaEventCreateWithFlags", device);
    check(cudaEventCreateWithFlags(&mark_, cudaEventDisableTiming), "cudaEventCreateWithFlags", device);
  }
  ~CudaStream() override {
    for (cudaEvent_t e : {fork_, mark_})
      if (e) cudaEventDestroy(e);  // teardown: nothing left to report to
    if (stream_) cudaStreamDestroy(stream_);
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  std::unique_ptr<DeviceQueue> timing_queue(std::function<void()> poll) override {
    return std::make_unique<CudaQueue>(stream_, device_, std::move(poll));
  }
  void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) override {
    check(cudaMemcpyAsync(dst, src, bytes, cuda_kind(kind), stream_), "cudaMemcpyAsync", device_);
  }
  void copy_peer(void* dst, int dst_device, const void* src, std::size_t bytes) override {
    check(cudaMemcpyPeerAsync(dst, dst_device, src, device_, bytes, stream_), "cudaMemcpyPeerAsync", device_);
  }
  void sm_copy(void* dst, const void* src, std::size_t bytes, int sm_count) override {
    gpu::sm_copy(dst, src, bytes, sm_count, stream_, device_);
  }
  void launch_empty_kernel() override { gpu::launch_empty_kernel(stream_, device_); }
  void wait_for(DeviceStream& other) override {
    auto& o = dynamic_cast<CudaStream&>(other);
    check(cudaEventRecord(o.fork_, o.stream_), "cudaEventRecord", device_);
    check(cudaStreamWaitEvent(stream_, o.fork_, 0), "cudaStreamWaitEvent", device_);
  }
  void synchronize() override { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize", device_); }
  void mark() override { check(cudaEventRecord(mark_, stream_), "cudaEventRecord", device_); }
  bool mark_passed() override {
    const cudaError_t rc = cudaEventQuery(mark_);
    if (rc == cudaErrorNotReady) return false;
    check(rc, "cudaEventQuery", device_);
    return true;
  }
  cudaStream_t raw() const { return stream_; }

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t fork_ = nullptr;  // recorded here when another stream waits for this one
  cudaEvent_t mark_ = nullptr;  // mark()
};

class CudaDevices final : public Devices {
 public:
  std::string absent_reason() override {
    static const std::string reason = probe();
    return reason;
  }
  std::string version() override {
    int runtime = 0;
    int driver = 0;
    // A version that cannot be read says so rather than "0.0".
    const auto text = [](cudaError_t rc, int v) {
      return rc == cudaSuccess ? cuda_version_text(v) : std::string("unknown");
    };
    const cudaError_t runtime_rc = cudaRuntimeGetVersion(&runtime);
    const cudaError_t driver_rc = cudaDriverGetVersion(&driver);
    return fmt::format("CUDA runtime {}, driver {}", text(runtime_rc, runtime), text(driver_rc, driver));
  }
  int count() override {
    int n = 0;
    check(cudaGetDeviceCount(&n), "cudaGetDeviceCount", -1);
    return n;
  }
  std::string make_current(int device) override {
    const cudaError_t rc = cudaSetDevice(device);
    if (rc == cudaSuccess) return {};
    cudaGetLastError();
    return fmt::format("cudaSetDevice: {}: {}", cudaGetErrorName(rc), cudaGetErrorString(rc));
  }
  int current_device() override { return current_gpu(); }
  DeviceProps props(int device) override {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties", device);
    char bus[32] = {};
    check(cudaDeviceGetPCIBusId(bus, sizeof(bus), device), "cudaDeviceGetPCIBusId", device);
    return {prop.name, bus, prop.totalGlobalMem, prop.major, prop.minor, prop.multiProcessorCount};
  }
  int by_bus_id(const std::string& bus_id) override {
    int device = -1;
    if (cudaDeviceGetByPCIBusId(&device, bus_id.c_str()) == cudaSuccess) return device;
    cudaGetLastError();  // not sticky
    return -1;
  }
  bool can_access_peer(int device, int peer) override {
    int can = 0;
    check(cudaDeviceCanAccessPeer(&can, device, peer), "cudaDeviceCanAccessPeer", device);
    return can != 0;
  }
  void set_peer_access(int device, int peer, bool on) override {
    DeviceGuard here(device);
    const cudaError_t rc = on ? cudaDeviceEnablePeerAccess(peer, 0) : cudaDeviceDisablePeerAccess(peer);
    if (rc == cudaErrorPeerAccessAlreadyEnabled || rc == cudaErrorPeerAccessNotEnabled) {
      cudaGetLastError();  // already as wanted
      return;
    }
    check(rc, on ? "cudaDeviceEnablePeerAccess" : "cudaDeviceDisablePeerAccess", device);
  }

  std::string allocate(MemoryKind kind, int device, std::size_t bytes, void*& data) override {
    cudaError_t rc = cudaSuccess;
    if (kind == MemoryKind::device) {
      DeviceGuard on(device);
      int now = -1;
      if (cudaGetDevice(&now) != cudaSuccess || now != device) {
        cudaGetLastError();
        return fmt::format("cannot make GPU {} current to allocate on it", device);
      }
      rc = cudaMalloc(&data, bytes);
    } else {
      rc = cudaHostAlloc(&data, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
    }
    if (rc == cudaSuccess) return {};
    data = nullptr;
    cudaGetLastError();  // an allocation failure is not sticky; clear it for the next call
    return cudaGetErrorString(rc);
  }
  void release(MemoryKind kind, int device, void* data) noexcept override {
    if (kind == MemoryKind::device) {
      DeviceGuard on(device);
      cudaFree(data);
    } else {
      cudaFreeHost(data);
    }
  }
  std::string memory_text(int device) override {
    DeviceGuard on(device);
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return fmt::format("GPU {}", device);
    return fmt::format("GPU {} has {} free of {}", device, format_bytes(free_bytes), format_bytes(total_bytes));
  }

  std::unique_ptr<DeviceStream> make_stream(int device) override { return std::make_unique<CudaStream>(device); }
  void copy_now(void* dst, const void* src, std::size_t bytes, int device) override {
    check(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy", device);
  }

  void fill_input(int device, const CheckContext& ctx, void* in) override {
    DeviceGuard on(device);
    gpu::fill_input(ctx, in, nullptr, device);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device);
  }
  void poison(int device, void* out, std::size_t bytes) override {
    DeviceGuard on(device);
    gpu::poison(out, bytes, nullptr, device);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device);
  }
  std::uint64_t count_wrong(int device, const CheckContext& ctx, const void* out) override {
    DeviceGuard on(device);
    return gpu::count_wrong(ctx, out, nullptr, device);
  }
  void corrupt_element(int device, Dtype dtype, void* out, std::uint64_t index) override {
    gpu::corrupt_element(dtype, out, index, device);
  }
};

}  // namespace

cudaStream_t raw_stream(DeviceStream& stream) { return dynamic_cast<CudaStream&>(stream).raw(); }

Devices& cuda_devices() {
  static CudaDevices devices;
  return devices;
}

DeviceGuard::DeviceGuard(int device) {
  cudaGetDevice(&previous_);
  if (previous_ != device) cudaSetDevice(device);
}

DeviceGuard::~DeviceGuard() {
  int now = 0;
  cudaGetDevice(&now);
  if (now != previous_) cudaSetDevice(previous_);
}

std::string absent_reason() { return cuda_devices().absent_reason(); }

int current_gpu() {
  int device = -1;
  return cudaGetDevice(&device) == cudaSuccess ? device : -1;
}

std::vector<LibraryVersion> cuda_versions() {
  std::vector<LibraryVersion> out;
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess && runtime > 0)
    out.push_back({"cuda_runtime", cuda_version_text(runtime), ""});
  else
    out.push_back({"cuda_runtime", "", "cudaRuntimeGetVersion failed"});
  // 0 with success means no driver: the runtime loaded, libcuda did not.
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0)
    out.push_back({"cuda_driver", cuda_version_text(driver), ""});
  else
    out.push_back({"cuda_driver", "", "cudaDriverGetVersion: no CUDA driver installed"});
  return out;
}

}  // namespace fb::gpu

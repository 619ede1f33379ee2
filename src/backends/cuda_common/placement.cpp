// Where each rank runs: one CUDA device per rank, checked across the node.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <sstream>

#include "gpu_backends.hpp"

namespace fb::gpu {
namespace {

std::string probe() {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  const std::string detail =
      rc == cudaSuccess ? "" : fmt::format(" (cudaGetDeviceCount: {}: {})", cudaGetErrorName(rc), cudaGetErrorString(rc));
  if (rc == cudaErrorInsufficientDriver)
    return fmt::format("no usable NVIDIA driver on host {}{}", host_name(), detail);
  if (rc == cudaErrorNoDevice || (rc == cudaSuccess && count == 0))
    return fmt::format("no CUDA device on host {}{}", host_name(), detail);
  if (rc != cudaSuccess) return fmt::format("CUDA is not usable on host {}{}", host_name(), detail);
  return {};
}

// This rank's device, or why it has none.
[[nodiscard]] std::string pick_device(int device_option, GpuPlacement& out) {
  if (const std::string absent = absent_reason(); !absent.empty()) return absent;
  gpu::check(cudaGetDeviceCount(&out.device_count), "cudaGetDeviceCount", -1);
  const gpu::DeviceChoice choice = choose_device(device_option, out.local_rank, out.device_count, host_name());
  if (!choice.error.empty()) return choice.error;
  out.device = choice.device;
  cudaDeviceProp prop{};
  cudaError_t rc = cudaSetDevice(out.device);
  if (rc == cudaSuccess) rc = cudaGetDeviceProperties(&prop, out.device);
  char bus[32] = {};
  if (rc == cudaSuccess) rc = cudaDeviceGetPCIBusId(bus, sizeof(bus), out.device);
  if (rc != cudaSuccess)
    return fmt::format("CUDA device {} of host {} is not usable: {}: {}", out.device, host_name(),
                       cudaGetErrorName(rc), cudaGetErrorString(rc));
  out.name = prop.name;
  out.pci_bus_id = bus;
  out.memory_bytes = prop.totalGlobalMem;
  out.cc_major = prop.major;
  out.cc_minor = prop.minor;
  out.sm_count = prop.multiProcessorCount;
  return {};
}

}  // namespace

std::string absent_reason() {
  static const std::string reason = probe();
  return reason;
}

int current_gpu() {
  int device = -1;
  return cudaGetDevice(&device) == cudaSuccess ? device : -1;
}

Support place_on_gpu(const Comm& world, int device_option, GpuPlacement& out) {
  const Comm node = world.split_node();
  out.local_rank = node.rank();
  std::string error = pick_device(device_option, out);
  // Every rank of the node takes part, whatever it found, so none waits alone.
  const auto seen = node.allgather_strings(fmt::format("{} {}", world.rank(), error.empty() ? out.pci_bus_id : "-"));
  std::vector<PlacedRank> placed;
  for (const auto& text : seen) {
    std::istringstream fields(text);
    PlacedRank p;
    fields >> p.world_rank >> p.bus_id;
    if (p.bus_id == "-") p.bus_id.clear();
    placed.push_back(p);
  }
  if (error.empty())
    error = shared_gpu_error(placed, static_cast<std::size_t>(node.rank()), out.device, out.device_count,
                                  host_name());
  // The job's lowest GPU, so that what a GPU generation supports is decided alike on every rank.
  Capability mine;
  if (error.empty()) mine = {out.cc_major, out.cc_minor, world.rank(), host_name()};
  out.lowest = lowest_capability(world.allgather_strings(encode(mine)));
  return error.empty() ? Support::yes() : Support::no(error);
}

namespace {

std::string cuda_version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

}  // namespace

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

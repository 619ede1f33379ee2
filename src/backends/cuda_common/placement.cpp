// Where each rank runs: one CUDA device per rank, checked across the node.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <sstream>

#include "gpu_backends.hpp"

namespace fb {
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
std::string pick_device(const Comm& node, int device_option, GpuPlacement& out) {
  if (const std::string absent = gpu_absent_reason(); !absent.empty()) return absent;
  cudaGetDeviceCount(&out.device_count);
  out.device = device_option >= 0 ? device_option : out.local_rank;
  if (out.device >= out.device_count) {
    if (device_option >= 0)
      return fmt::format("--device {}: host {} has {} CUDA device(s), 0 to {}", device_option, host_name(),
                         out.device_count, out.device_count - 1);
    return fmt::format("host {} runs {} ranks but has {} CUDA device(s): launch at most {} rank(s) per node, one "
                       "per GPU",
                       host_name(), node.size(), out.device_count, out.device_count);
  }
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

std::string gpu_absent_reason() {
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
  std::string error = pick_device(node, device_option, out);
  // Every rank of the node takes part, whatever it found, so none waits alone.
  const auto seen = node.allgather_strings(fmt::format("{} {}", world.rank(), error.empty() ? out.pci_bus_id : "-"));
  for (int r = 0; r < node.rank() && error.empty(); ++r) {
    std::istringstream fields(seen[static_cast<std::size_t>(r)]);
    int other = -1;
    std::string bus;
    fields >> other >> bus;
    if (bus == out.pci_bus_id)
      error = fmt::format("ranks {} and {} are both on CUDA device {} ({}) of host {}: NCCL and the copy paths need "
                          "one rank per GPU; launch at most {} rank(s) per node, one per GPU",
                          other, world.rank(), out.device, out.pci_bus_id, host_name(), out.device_count);
  }
  return error.empty() ? Support::yes() : Support::no(error);
}

}  // namespace fb

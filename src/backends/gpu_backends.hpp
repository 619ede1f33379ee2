// The GPU side of the build as plain C++, for the registry, the CLI and the
// tests: which GPU backends exist, why they are absent here, and where a rank
// runs. Compiled with or without CUDA (then everything says why it is absent).
#pragma once

#include <cstdint>
#include <string>

#include "cuda_common/placement_rules.hpp"
#include "fabricbench/backends/backend.hpp"

namespace fb {

// "" when this process can use a CUDA device; otherwise why not: built
// without CUDA, no usable driver, no device.
std::string gpu_absent_reason();

BackendInfo nccl_backend_info();
BackendInfo cuda_copy_backend_info();
BackendInfo mpi_cuda_backend_info();

// The GPU a rank runs on.
struct GpuPlacement {
  int device = -1;        // CUDA device index, current after place_on_gpu
  int local_rank = 0;     // the rank's index on its node
  int device_count = 0;   // CUDA devices this process sees
  std::string name;       // "NVIDIA H200"
  std::string pci_bus_id; // "0000:1B:00.0"
  std::uint64_t memory_bytes = 0;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  gpu::Capability lowest;  // the job's lowest GPU (every rank holds the same)
};

// Collective over `world`: picks this rank's device (gpu::choose_device:
// `device_option`, or its index on its node wrapped to the devices it sees)
// and makes it current. "No", on the ranks that see it, when there is no GPU
// or two ranks are on one physical GPU (named by PCI bus id, before NCCL
// refuses it). Fills `lowest` from every rank.
Support place_on_gpu(const Comm& world, int device_option, GpuPlacement& out);

// The device place_on_gpu made current on this rank; -1 without one.
int current_gpu();

}  // namespace fb

// Inside the GPU plugins: where a rank runs and why the GPU is absent here.
// The types are the public ones (fabricbench/backends/gpu.hpp).
#pragma once

#include <string>
#include <vector>

#include "cuda_common/devices.hpp"
#include "cuda_common/placement_rules.hpp"
#include "fabricbench/backends/gpu.hpp"
#include "fabricbench/backends/plugin.hpp"
#include "fabricbench/core/backend.hpp"

namespace fb::gpu {

// "" when this process can use a CUDA device; otherwise why not: no usable
// driver, no device. (The CUDA device layer's, cuda_devices.cpp.)
[[nodiscard]] std::string absent_reason();

// Collective over `world`: picks this rank's device (gpu::choose_device:
// `device_option`, or its index on its node wrapped to the devices it sees)
// and makes it current. "No", on the ranks that see it, when there is no GPU
// or two ranks are on one physical GPU (named by PCI bus id, before NCCL
// refuses it). Fills `lowest` from every rank. Through `devices`: CUDA's in
// the plugins, the host double in the tests.
Support place_on_gpu(const Comm& world, int device_option, GpuPlacement& out, Devices& devices);

// The device place_on_gpu made current on this rank; -1 without one.
int current_gpu();

// The CUDA runtime and driver versions as this process loaded them, for the record.
std::vector<LibraryVersion> cuda_versions();

}  // namespace fb::gpu

// The cuda backend: the copy paths inside a node, per rank on its own GPU
// (device-local, host<->device, peer GPUs) and kernel-launch latency, as rows
// of the same engine and record as the collectives.
#pragma once

#include <memory>
#include <string>

#include "cuda_common/devices.hpp"
#include "fabricbench/core/backend.hpp"

namespace fb {

// Over `devices` (gpu::cuda_devices() in the plugin); host memory is read
// under `host_root` ("/", or a fixture tree in tests) before host buffers grow.
std::unique_ptr<Backend> make_cuda_copy_backend(gpu::Devices& devices, const std::string& host_root = "/");

}  // namespace fb

// NCCL backend: one rank per GPU, a communicator per scope group (unique id
// broadcast over MPI), device buffers, event-timed collectives and
// point-to-point, device-side check, and the transport NCCL chose on every row.
// Plain C++ over the device layer and the collective library: CUDA and NCCL
// in the plugin, the host doubles in tests.
#pragma once

#include <memory>

#include "collectives.hpp"
#include "cuda_common/devices.hpp"
#include "fabricbench/core/backend.hpp"

namespace fb {

std::unique_ptr<Backend> make_nccl_backend(gpu::Devices& devices, nccl::Collectives& lib);

}  // namespace fb

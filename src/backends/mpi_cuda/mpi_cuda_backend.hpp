// mpi-cuda: the MPI library's collectives and point-to-point on device
// buffers, usable only when the library is CUDA-aware (it says so through
// MPIX_Query_cuda_support or MPIX_GPU_query_support); otherwise absent, with
// that reason.
#pragma once

#include <memory>
#include <string>

#include "fabricbench/core/backend.hpp"

namespace fb {

namespace gpu {
class Devices;
}

// Over `devices` (the CUDA layer in the plugin, the host double in tests),
// which must outlive it.
std::unique_ptr<Backend> make_mpi_cuda_backend(gpu::Devices& devices);

// "" when the MPI library says it takes device buffers; else why it does not.
// Needs MPI initialised.
[[nodiscard]] std::string mpi_cuda_awareness();

}  // namespace fb

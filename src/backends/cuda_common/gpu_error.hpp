// CUDA errors as RunErrors that name the call, the rank, the host and the
// GPU, so a failure on one rank of a large job says where it happened.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace fb::gpu {

// "cudaMemcpyAsync failed on rank 3 (host n07, GPU 1): cudaErrorIllegalAddress: an illegal memory access..."
std::string error_text(const char* call, const std::string& what, int device);

[[noreturn]] void throw_cuda_error(const char* call, cudaError_t rc, int device);

inline void check(cudaError_t rc, const char* call, int device) {
  if (rc != cudaSuccess) throw_cuda_error(call, rc, device);
}

// After a kernel launch: the launch error, if any.
void check_launch(const char* kernel, int device);

}  // namespace fb::gpu

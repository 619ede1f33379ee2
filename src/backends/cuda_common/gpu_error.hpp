// CUDA errors as RunErrors that name the call, the rank, the host and the
// GPU, so a failure on one rank of a large job says where it happened.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "error_text.hpp"

namespace fb::gpu {

[[noreturn]] void throw_cuda_error(const char* call, cudaError_t rc, int device);

inline void check(cudaError_t rc, const char* call, int device) {
  if (rc != cudaSuccess) throw_cuda_error(call, rc, device);
}

// After a kernel launch: the launch error, if any.
void check_launch(const char* kernel, int device);

}  // namespace fb::gpu

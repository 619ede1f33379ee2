// Kernels the cuda backend times: a device-local copy by the SMs, and an
// empty kernel for launch latency.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace fb::gpu {

// Copies `bytes` from `src` to `dst` (16-byte aligned) with `sm_count` SMs'
// worth of resident blocks; queued on `stream`.
void sm_copy(void* dst, const void* src, std::size_t bytes, int sm_count, cudaStream_t stream, int device);
void launch_empty_kernel(cudaStream_t stream, int device);

}  // namespace fb::gpu

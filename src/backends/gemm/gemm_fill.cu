#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda_common/gpu_error.hpp"
#include "cuda_common/launch.cuh"
#include "gemm_fill.hpp"

namespace fb::gpu {
namespace {

// Uniform in [-1, 1) from a hash of the index and a seed per matrix, never 0.
template <typename T>
__global__ void random_fill(T* data, std::uint64_t n, std::uint64_t seed) {
  for (std::uint64_t i = global_index(); i < n; i += global_stride()) {
    std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    h *= 0x94D049BB133111EBull;
    h ^= h >> 29;
    float v = static_cast<float>(h >> 40) * (2.0f / 16777216.0f) - 1.0f;
    if (v == 0.0f) v = 0.5f;
    data[i] = static_cast<T>(v);
  }
}

}  // namespace

void random_fill(Dtype dtype, void* data, std::uint64_t n, std::uint64_t seed, int device) {
  if (dtype == Dtype::bfloat16) {
    random_fill<<<grid_for(n), kBlock>>>(static_cast<__nv_bfloat16*>(data), n, seed);
  } else if (dtype == Dtype::half) {
    random_fill<<<grid_for(n), kBlock>>>(static_cast<__half*>(data), n, seed);
  } else {
    random_fill<<<grid_for(n), kBlock>>>(static_cast<float*>(data), n, seed);
  }
  check_launch("the GEMM input fill kernel", device);
}

}  // namespace fb::gpu

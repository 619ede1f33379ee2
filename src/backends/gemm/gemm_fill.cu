#define FB_HD __host__ __device__

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "cuda_common/gpu_error.hpp"
#include "cuda_common/launch.cuh"
#include "gemm_fill.hpp"
#include "gemm_values.hpp"

namespace fb::gpu {
namespace {

template <typename T>
__global__ void random_fill(T* data, std::uint64_t n, std::uint64_t seed) {
  for (std::uint64_t i = global_index(); i < n; i += global_stride())
    data[i] = static_cast<T>(gemm::input_value(i, seed));
}

}  // namespace

void random_fill(Dtype dtype, void* data, std::uint64_t n, std::uint64_t seed, int device) {
  if (dtype == Dtype::bfloat16) {
    random_fill<<<grid_for(n), kBlock>>>(static_cast<__nv_bfloat16*>(data), n, seed);
  } else if (dtype == Dtype::half) {
    random_fill<<<grid_for(n), kBlock>>>(static_cast<__half*>(data), n, seed);
  } else if (dtype == Dtype::fp8_e4m3) {
    random_fill<<<grid_for(n), kBlock>>>(static_cast<__nv_fp8_e4m3*>(data), n, seed);
  } else {
    random_fill<<<grid_for(n), kBlock>>>(static_cast<float*>(data), n, seed);
  }
  check_launch("the GEMM input fill kernel", device);
}

}  // namespace fb::gpu

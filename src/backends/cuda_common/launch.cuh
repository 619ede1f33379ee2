// Grid-stride launch helpers shared by the backends' kernels.
#pragma once

#include <cstdint>

namespace fb::gpu {

constexpr int kBlock = 256;
// Enough blocks to cover `n` items, capped: grid-stride loops do the rest.
inline unsigned grid_for(std::uint64_t n) {
  const std::uint64_t blocks = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

__device__ inline std::uint64_t global_index() {
  return static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::uint64_t global_stride() { return static_cast<std::uint64_t>(gridDim.x) * blockDim.x; }

}  // namespace fb::gpu

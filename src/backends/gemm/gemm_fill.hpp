// Random GEMM inputs, written on the device.
#pragma once

#include <cstdint>

#include "fabricbench/core/types.hpp"

namespace fb::gpu {

// `n` elements of `dtype` (bfloat16, half or float32), uniform in [-1, 1), never 0, on the default stream.
void random_fill(Dtype dtype, void* data, std::uint64_t n, std::uint64_t seed, int device);

}  // namespace fb::gpu

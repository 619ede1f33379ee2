// Random GEMM inputs (gemm_values.hpp), written on the device.
#pragma once

#include <cstdint>

#include "fabricbench/core/types.hpp"

namespace fb::gpu {

// `n` elements of `dtype` (bfloat16, half, float32 or fp8_e4m3: the caller
// refuses others), on the default stream.
void random_fill(Dtype dtype, void* data, std::uint64_t n, std::uint64_t seed, int device);

}  // namespace fb::gpu

// The random inputs of a GEMM, shared by the device's fill kernel
// (gemm_fill.cu, compiled by nvcc with FB_HD = __host__ __device__) and the
// host double's (tests/support/sim_blas.cpp), so both write the same values
// and a test can rebuild them for its reference. Header-only.
#pragma once

#include <cstdint>

#ifndef FB_HD
#define FB_HD
#endif

namespace fb::gemm {

// Uniform in [-1, 1) from a hash of the index and a seed per matrix, never 0
// (zeros multiply faster than real data). Multiples of 2^-23: a bf16 or fp16
// input rounds them.
FB_HD inline float input_value(std::uint64_t i, std::uint64_t seed) {
  std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed * 0xBF58476D1CE4E5B9ull;
  h ^= h >> 31;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 29;
  float v = static_cast<float>(h >> 40) * (2.0f / 16777216.0f) - 1.0f;
  if (v == 0.0f) v = 0.5f;
  return v;
}

}  // namespace fb::gemm

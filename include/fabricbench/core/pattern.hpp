// Check data. Each input element carries a value that depends on the rank
// that owns it and on its position, so a block delivered to the wrong place
// or a missing or doubled rank contribution gives a wrong value, not just a
// wrong sum. Values are small integers: sums over many ranks stay exact in
// every datatype that can hold them (float, double, int), and wrap the same
// way on both sides for narrow integers. Header-only and free of host-only
// calls, so device code can include it (define FB_HD as __host__ __device__).
#pragma once

#include <cstdint>

#ifndef FB_HD
#define FB_HD
#endif

namespace fb::pattern {

// Value of element `index` of rank `rank`'s input: 1..15.
FB_HD inline std::int32_t value(std::int32_t rank, std::uint64_t index) {
  std::uint64_t h = index * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(rank + 1) * 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 32;
  return static_cast<std::int32_t>(h % 15u) + 1;
}

// For prod: +1 or -1, so products over any rank count stay exact in floats;
// integer types compute the expected product with the same wrapping.
FB_HD inline std::int32_t sign(std::int32_t rank, std::uint64_t index) {
  return (value(rank, index) & 1) ? 1 : -1;
}

// Written into outputs before a checked iteration: an element the operation
// never wrote keeps it and counts as wrong. For 16-bit and wider types no
// valid result equals it; an 8-bit sum can, so there the check is weaker.
constexpr unsigned char kPoisonByte = 0x5A;

}  // namespace fb::pattern

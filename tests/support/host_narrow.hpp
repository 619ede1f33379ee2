// The 16- and 8-bit floats on the host, for the host doubles: the storage
// and rounding of half, bfloat16, fp8 e4m3 and e5m2 (round to nearest even;
// fp8 saturates to its largest finite value, as CUDA's __nv_fp8 conversions
// do by default; half overflows to infinity), so the double's reductions and
// check run the same templates (check_values.hpp) on the same bits a GPU's
// would hold. Tests only.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace fb::test {

// A binary float of E exponent bits and M mantissa bits in the low bits of
// `Bits`. `Ieee`: the top exponent is infinity and NaN (half, e5m2); else
// (e4m3) it holds normal numbers and only all ones is NaN.
template <typename Bits, int E, int M, bool Ieee, bool Saturate>
struct SmallFloat {
  Bits bits = 0;
  SmallFloat() = default;
  explicit SmallFloat(float f) : bits(encode(f)) {}
  explicit operator float() const { return decode(bits); }

  static constexpr int kBias = (1 << (E - 1)) - 1;
  static constexpr int kMaxExp = Ieee ? (1 << E) - 2 - kBias : (1 << E) - 1 - kBias;
  static constexpr Bits kNan = Ieee ? Bits(((1u << E) - 1) << M | (1u << (M - 1))) : Bits((1u << (E + M)) - 1);
  static constexpr Bits kInf = Bits(((1u << E) - 1) << M);

  static double largest() {
    const int top_mantissa = Ieee ? (1 << M) - 1 : (1 << M) - 2;  // e4m3's all-ones mantissa is NaN
    return std::ldexp(1.0 + top_mantissa / double(1 << M), kMaxExp);
  }

  static Bits encode(float f) {
    const Bits sign = std::signbit(f) ? Bits(1u << (E + M)) : Bits(0);
    if (std::isnan(f)) return kNan;
    double a = std::fabs(static_cast<double>(f));
    if (a > largest()) {
      // Past the largest finite: what rounding would give decides saturation or infinity.
      if (Saturate || !Ieee) return sign | encode_finite(largest());
      const double halfway = largest() + std::ldexp(1.0, kMaxExp - M - 1);
      return sign | (a >= halfway ? kInf : encode_finite(largest()));
    }
    return sign | encode_finite(a);
  }

  static Bits encode_finite(double a) {
    if (a == 0) return 0;
    int e = std::ilogb(a);
    const int min_exp = 1 - kBias;
    if (e < min_exp) {  // subnormal: a multiple of 2^(min_exp - M)
      const double q = std::nearbyint(std::ldexp(a, M - min_exp));
      return static_cast<Bits>(q);  // q == 2^M reads as the smallest normal, as it should
    }
    double q = std::nearbyint(std::ldexp(a, M - e));  // in [2^M, 2^(M+1)]
    if (q >= double(1 << (M + 1))) {
      q /= 2;
      ++e;
    }
    if (e > kMaxExp) return encode_finite(largest());
    return static_cast<Bits>(((e + kBias) << M) | (static_cast<int>(q) - (1 << M)));
  }

  static float decode(Bits b) {
    const bool negative = (b >> (E + M)) & 1;
    const int exp = (b >> M) & ((1 << E) - 1);
    const int mant = b & ((1 << M) - 1);
    double v;
    if (Ieee && exp == (1 << E) - 1)
      v = mant ? NAN : INFINITY;
    else if (!Ieee && exp == (1 << E) - 1 && mant == (1 << M) - 1)
      v = NAN;
    else if (exp == 0)
      v = std::ldexp(mant, 1 - kBias - M);
    else
      v = std::ldexp(1.0 + mant / double(1 << M), exp - kBias);
    return static_cast<float>(negative ? -v : v);
  }
};

using HostHalf = SmallFloat<std::uint16_t, 5, 10, true, false>;
using HostE4m3 = SmallFloat<std::uint8_t, 4, 3, false, true>;
using HostE5m2 = SmallFloat<std::uint8_t, 5, 2, true, true>;

// bfloat16: float's top half, rounded to nearest even.
struct HostBf16 {
  std::uint16_t bits = 0;
  HostBf16() = default;
  explicit HostBf16(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    if (std::isnan(f)) {
      bits = 0x7FC0;
      return;
    }
    u += 0x7FFF + ((u >> 16) & 1);
    bits = static_cast<std::uint16_t>(u >> 16);
  }
  explicit operator float() const {
    const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

// For visit_dtype: the host's narrow floats.
struct SimNarrow {
  using half = HostHalf;
  using bfloat16 = HostBf16;
  using e4m3 = HostE4m3;
  using e5m2 = HostE5m2;
};

// The type a datatype's expectation is computed in: float for the narrow
// floats (as the device check's), the type itself otherwise.
template <typename S>
struct HostCompute {
  using type = S;
};
template <typename Bits, int E, int M, bool I, bool S>
struct HostCompute<SmallFloat<Bits, E, M, I, S>> {
  using type = float;
};
template <>
struct HostCompute<HostBf16> {
  using type = float;
};

}  // namespace fb::test

// When the check cannot compare exactly, and what it accepts then: a summing
// reduction in a floating-point type over more ranks than the type's exact
// integer range (check_value_limit folds every input to 1 there). NCCL keeps
// partial sums in the datatype between hops (fp8: 1+1+... sticks at 16 in
// e4m3, at 8 in e5m2, for a ring; other orders round elsewhere), so the
// result depends on NCCL's order and is no fault. Such results are accepted
// when they are finite and within the bounds every summation order obeys:
// at least min(n, range) for sum (rounding to nearest never lowers a partial
// sum of positive terms below the largest exact integer it passed), at most
// n(1+u)^(n-1) (the recursive-summation bound, u the unit roundoff), and the
// same divided by n for avg (NCCL pre-scales by 1/n: (0, (1+u)^n]). Poison,
// a lost contribution below the range, NaN or a wrong sign still count.
// Header-only and FB_HD, for the device check and the engine's note alike.
#pragma once

#include <cmath>

#include "fabricbench/core/check_values.hpp"

namespace fb::check {

// Can the check compare the results of an op exactly? `reduces`: the op
// combines inputs (its OpCheck's, op_desc.hpp).
FB_HD inline bool exact(Dtype dtype, bool reduces, RedOp redop, int nranks) {
  const std::int64_t range = exact_integer_range(dtype);
  if (range == 0 || !reduces || (redop != RedOp::sum && redop != RedOp::avg)) return true;
  return nranks <= range;
}

// 2^-(mantissa bits + 1).
FB_HD inline double unit_roundoff(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp8_e5m2:
      return 0.125;
    case Dtype::fp8_e4m3:
      return 0.0625;
    case Dtype::bfloat16:
      return 1.0 / 256;
    case Dtype::half:
      return 1.0 / 2048;
    case Dtype::float32:
      return 1.0 / 16777216;
    case Dtype::float64:
    case Dtype::int8:
    case Dtype::uint8:
    case Dtype::int32:
    case Dtype::uint32:
    case Dtype::int64:
    case Dtype::uint64:  // float64; the integer types (exact) get its figure too
      return 1.1102230246251565e-16;
  }
  return 1.1102230246251565e-16;
}

FB_HD inline double largest_finite(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp8_e4m3:
      return 448;
    case Dtype::fp8_e5m2:
      return 57344;
    case Dtype::half:
      return 65504;
    case Dtype::bfloat16:
    case Dtype::float32:
      return 3.4028234663852886e38;
    case Dtype::float64:
    case Dtype::int8:
    case Dtype::uint8:
    case Dtype::int32:
    case Dtype::uint32:
    case Dtype::int64:
    case Dtype::uint64:  // float64; the integer types (exact) get its figure too
      return 1.7976931348623157e308;
  }
  return 1.7976931348623157e308;
}

struct Bounds {
  double low = 0;       // accepted from (avg: above) this
  double high = 0;      // up to this
  bool low_open = false;
};

// What an inexact result may be (only meaningful where exact() is false).
FB_HD inline Bounds inexact_bounds(Dtype dtype, RedOp redop, int nranks) {
  const double n = nranks;
  const double range = static_cast<double>(exact_integer_range(dtype));
  const double growth = ::pow(1.0 + unit_roundoff(dtype), n - 1);
  Bounds b;
  if (redop == RedOp::avg) {
    b.low = 0;
    b.low_open = true;
    b.high = growth * (1.0 + unit_roundoff(dtype));
  } else {
    b.low = n < range ? n : range;
    b.high = n * growth;
  }
  if (b.high > largest_finite(dtype)) b.high = largest_finite(dtype);
  return b;
}

FB_HD inline bool within(const Bounds& b, double value) {
  if (!(value == value) || value > b.high) return false;  // NaN, or above
  return b.low_open ? value > b.low : value >= b.low;
}

// Does an output element match? `value` is what memory holds and `stored`
// the expected value rounded to the datatype, both widened. Exact, except
// where the result is inexact by nature in floating point: past the
// datatype's exact range, within what any order of the sum may give; an avg
// over a rank count that is not a power of two, within one unit of the last
// place per rank. The device check and the host double judge by this alike.
FB_HD inline bool matches(double value, double stored, const CheckContext& ctx) {
  if (exact_integer_range(ctx.dtype) > 0) {  // a floating-point type
    if (!exact(ctx.dtype, ctx.rule.reduces, ctx.redop, ctx.nranks))
      return within(inexact_bounds(ctx.dtype, ctx.redop, ctx.nranks), value);
    if (ctx.redop == RedOp::avg && ctx.rule.reduces && !avg_is_exact(ctx.nranks)) {
      const double eps = 2 * unit_roundoff(ctx.dtype);  // the datatype's machine epsilon
      const double scale = ::fabs(stored) > 1.0 ? ::fabs(stored) : 1.0;
      return ::fabs(value - stored) <= eps * scale * ctx.nranks;
    }
  }
  return value == stored;
}

}  // namespace fb::check

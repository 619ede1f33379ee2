// The exact expected value of every output element of every op, shared by the
// host check (src/core/host_check.cpp) and the device check of the GPU
// backends (compiled by nvcc with FB_HD = __host__ __device__), so both judge
// an output by the same rule. Header-only, no host-only calls.
//
// `T` is the arithmetic type the expectation is computed in: the datatype
// itself for integers, float and double; float for half, bfloat16 and fp8
// (their patterns are small integers that float holds exactly, and
// `max_value` keeps every partial sum inside the narrow type's exact range).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "fabricbench/core/layout.hpp"
#include "fabricbench/core/op_desc.hpp"
#include "fabricbench/core/pattern.hpp"
#include "fabricbench/core/types.hpp"

namespace fb {

struct CheckContext {
  // The op's check rule, from its row of the op table: check_context() in
  // backend.hpp sets it (op_desc(op).check()). The op itself stays on the
  // host: device code cannot read the table.
  OpCheck rule;
  Dtype dtype = Dtype::float32;
  RedOp redop = RedOp::sum;
  int rank = 0;    // this rank's index in the communicator of the op
  int nranks = 1;
  int root = 0;    // rooted ops: broadcast, reduce, gather, scatter
  int source = -1; // point-to-point ops: the rank this one receives from; -1 = receives nothing
  // Input patterns are folded into 1..max_value (see check_value_limit).
  std::int32_t max_value = 15;
  Layout layout;
};

namespace check {

FB_HD inline std::int32_t folded(std::int32_t v, std::int32_t max_value) {
  return max_value >= 15 ? v : 1 + (v - 1) % max_value;
}

template <typename T>
FB_HD T input_value(const CheckContext& ctx, int rank, std::uint64_t index) {
  if (ctx.redop == RedOp::prod && ctx.rule.reduces) return static_cast<T>(pattern::sign(rank, index));
  return static_cast<T>(folded(pattern::value(rank, index), ctx.max_value));
}

// Integer arithmetic wraps (as MPI and NCCL reductions do in practice); done
// in the unsigned type so the wrap is defined behaviour here.
template <typename T>
FB_HD T combine(RedOp op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case RedOp::sum:
      case RedOp::avg:
        return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
      case RedOp::prod:
        return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
      case RedOp::max:
        return a > b ? a : b;
      case RedOp::min:
        return a < b ? a : b;
    }
  } else {
    switch (op) {
      case RedOp::sum:
      case RedOp::avg:
        return a + b;
      case RedOp::prod:
        return a * b;
      case RedOp::max:
        return a > b ? a : b;
      case RedOp::min:
        return a < b ? a : b;
    }
  }
  return a;  // not reached: both switches cover every operator
}

// avg = sum / n. Integers as NCCL divides them (FuncSumPostDiv in
// src/device/reduce_kernel.h: the wrapped sum divided by an int n): in a
// type that holds n, not in T, where 128 is -128 in int8 and 256 is 0 in
// uint8 (a wrong value, and SIGFPE in the host check).
template <typename T>
FB_HD T average(T sum, int n) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    return static_cast<T>(static_cast<std::int64_t>(sum) / n);
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<std::uint64_t>(sum) / static_cast<std::uint64_t>(n));
  } else {
    return static_cast<T>(sum / static_cast<T>(n));
  }
}

template <typename T>
FB_HD T reduced_value(const CheckContext& ctx, std::uint64_t index) {
  T acc = input_value<T>(ctx, 0, index);
  for (int r = 1; r < ctx.nranks; ++r) acc = combine(ctx.redop, acc, input_value<T>(ctx, r, index));
  if (ctx.redop == RedOp::avg) acc = average(acc, ctx.nranks);
  return acc;
}

// Does this rank have an output the check verifies? (reduce and gather: the
// root only; point-to-point: the ranks that receive.)
FB_HD inline bool has_output(const CheckContext& ctx) {
  switch (ctx.rule.expect) {
    case ExpectRule::reduced_at_root:
    case ExpectRule::gathered_at_root:
      return ctx.rank == ctx.root;
    case ExpectRule::from_source:
      return ctx.source >= 0;
    case ExpectRule::reduced:
    case ExpectRule::reduced_block:
    case ExpectRule::gathered:
    case ExpectRule::transposed:
    case ExpectRule::from_root:
    case ExpectRule::scattered:
    case ExpectRule::from_prev:
    case ExpectRule::own:
      return true;
  }
  return true;  // not reached
}

// Does this rank's input matter? A scatter sends the root's input alone: the
// others' is not written, so a rank that receives nothing keeps the poison
// even when its output shares the input's buffer (in-place), as nccl-tests
// initialises only the root's (scatter.cu).
FB_HD inline bool has_input(const CheckContext& ctx) {
  return ctx.rule.expect != ExpectRule::scattered || ctx.rank == ctx.root;
}

// Expected value of output element `j` of rank ctx.rank.
template <typename T>
FB_HD T expected_value(const CheckContext& ctx, std::uint64_t j) {
  const std::uint64_t block = ctx.layout.block;
  const auto rank_block = static_cast<std::uint64_t>(ctx.rank) * block;
  switch (ctx.rule.expect) {
    case ExpectRule::reduced:
    case ExpectRule::reduced_at_root:
      return reduced_value<T>(ctx, j);
    case ExpectRule::reduced_block:
      return reduced_value<T>(ctx, rank_block + j);
    case ExpectRule::gathered:
    case ExpectRule::gathered_at_root:
      return input_value<T>(ctx, static_cast<int>(j / block), j % block);
    case ExpectRule::transposed:
      return input_value<T>(ctx, static_cast<int>(j / block), rank_block + j % block);
    case ExpectRule::from_root:
      return input_value<T>(ctx, ctx.root, j);
    case ExpectRule::scattered:
      return input_value<T>(ctx, ctx.root, rank_block + j);
    case ExpectRule::from_prev:
      return input_value<T>(ctx, (ctx.rank - 1 + ctx.nranks) % ctx.nranks, j);
    case ExpectRule::from_source:
      return input_value<T>(ctx, ctx.source, j);
    case ExpectRule::own:
      return input_value<T>(ctx, ctx.rank, j);
  }
  return input_value<T>(ctx, ctx.rank, j);  // not reached: the switch covers every rule
}

// An avg over a rank count that is not a power of two is not exact in
// floating point (NCCL scales each input by 1/n before summing): such results
// are accepted within this many units of the datatype's last place per rank.
FB_HD inline bool avg_is_exact(int nranks) { return nranks > 0 && (nranks & (nranks - 1)) == 0; }

}  // namespace check

// Runs f(TypeTag<T>{}) with the C++ type T of `dtype`, for code that
// switches on the datatype once and then runs typed. `Narrow` supplies the
// 16- and 8-bit float types (`half`, `bfloat16`, `e4m3`, `e5m2`): CUDA's for
// the device check, NoType for the host, which has no arithmetic for them.
struct NoType {};
template <typename T>
struct TypeTag {
  using type = T;
};
struct HostNarrow {
  using half = NoType;
  using bfloat16 = NoType;
  using e4m3 = NoType;
  using e5m2 = NoType;
};

template <typename Narrow, typename F>
decltype(auto) visit_dtype(Dtype dtype, F&& f) {
  switch (dtype) {
    case Dtype::int8:
      return f(TypeTag<std::int8_t>{});
    case Dtype::uint8:
      return f(TypeTag<std::uint8_t>{});
    case Dtype::int32:
      return f(TypeTag<std::int32_t>{});
    case Dtype::uint32:
      return f(TypeTag<std::uint32_t>{});
    case Dtype::int64:
      return f(TypeTag<std::int64_t>{});
    case Dtype::uint64:
      return f(TypeTag<std::uint64_t>{});
    case Dtype::float32:
      return f(TypeTag<float>{});
    case Dtype::float64:
      return f(TypeTag<double>{});
    case Dtype::half:
      return f(TypeTag<typename Narrow::half>{});
    case Dtype::bfloat16:
      return f(TypeTag<typename Narrow::bfloat16>{});
    case Dtype::fp8_e4m3:
      return f(TypeTag<typename Narrow::e4m3>{});
    case Dtype::fp8_e5m2:
      return f(TypeTag<typename Narrow::e5m2>{});
  }
  throw std::invalid_argument("visit_dtype: not a datatype");
}

// The largest integer a datatype holds exactly with all smaller ones:
// 2^(mantissa bits + 1). Integers wrap the same way on both sides, so 0 (no limit).
FB_HD inline std::int64_t exact_integer_range(Dtype dtype) {
  switch (dtype) {
    case Dtype::half:
      return 2048;
    case Dtype::bfloat16:
      return 256;
    case Dtype::fp8_e4m3:
      return 16;
    case Dtype::fp8_e5m2:
      return 8;
    case Dtype::float32:
      return std::int64_t{1} << 24;
    case Dtype::float64:
      return std::int64_t{1} << 53;
    case Dtype::int8:
    case Dtype::uint8:
    case Dtype::int32:
    case Dtype::uint32:
    case Dtype::int64:
    case Dtype::uint64:
      return 0;
  }
  return 0;  // not reached
}

// Patterns for a summing reduction over `nranks` are folded into
// 1..range/nranks, so that every partial sum, in any order, is an integer the
// datatype holds exactly and the check stays an exact comparison. The check
// is exact up to `range` ranks (bfloat16: 256, half: 2048, e4m3: 16, e5m2: 8);
// beyond that every input is 1 and sums past the range round.
inline std::int32_t check_value_limit(Dtype dtype, Op op, RedOp redop, int nranks) {
  const std::int64_t range = exact_integer_range(dtype);
  if (range == 0 || !op_desc(op).reduces || (redop != RedOp::sum && redop != RedOp::avg)) return 15;
  const std::int64_t limit = range / (nranks > 0 ? nranks : 1);
  return static_cast<std::int32_t>(limit < 1 ? 1 : (limit > 15 ? 15 : limit));
}

}  // namespace fb

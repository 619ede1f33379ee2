#include "fabricbench/core/host_check.hpp"

#include <cstring>
#include <type_traits>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/pattern.hpp"

namespace fb {
namespace {

template <typename T>
T input_value(const CheckContext& ctx, int rank, std::uint64_t index) {
  const std::int32_t v = ctx.redop == RedOp::prod && is_reduction(ctx.op) ? pattern::sign(rank, index)
                                                                          : pattern::value(rank, index);
  return static_cast<T>(v);
}

// Integer arithmetic wraps (as MPI and NCCL reductions do in practice); done
// in the unsigned type so the wrap is defined behaviour here.
template <typename T>
T combine(RedOp op, T a, T b) {
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
  return a;
}

template <typename T>
T reduced_value(const CheckContext& ctx, std::uint64_t index) {
  T acc = input_value<T>(ctx, 0, index);
  for (int r = 1; r < ctx.nranks; ++r) acc = combine(ctx.redop, acc, input_value<T>(ctx, r, index));
  if (ctx.redop == RedOp::avg) acc = static_cast<T>(acc / static_cast<T>(ctx.nranks));
  return acc;
}

template <typename T>
T expected_value(const CheckContext& ctx, std::uint64_t j) {
  const std::uint64_t block = ctx.layout.block;
  switch (ctx.op) {
    case Op::all_reduce:
    case Op::reduce:
      return reduced_value<T>(ctx, j);
    case Op::reduce_scatter:
      return reduced_value<T>(ctx, static_cast<std::uint64_t>(ctx.rank) * block + j);
    case Op::all_gather:
      return input_value<T>(ctx, static_cast<int>(j / block), j % block);
    case Op::alltoall:
      return input_value<T>(ctx, static_cast<int>(j / block), static_cast<std::uint64_t>(ctx.rank) * block + j % block);
    case Op::broadcast:
      return input_value<T>(ctx, ctx.root, j);
    case Op::sendrecv:
      return input_value<T>(ctx, (ctx.rank - 1 + ctx.nranks) % ctx.nranks, j);
    case Op::pingpong:
    case Op::unidir:
    case Op::bidir:
      return input_value<T>(ctx, ctx.source, j);
  }
  return T{};
}

template <typename T>
void fill_typed(const CheckContext& ctx, void* in, void* out) {
  std::memset(out, pattern::kPoisonByte, ctx.layout.out_elems * sizeof(T));
  T* p = static_cast<T*>(in);
  for (std::uint64_t i = 0; i < ctx.layout.in_elems; ++i) p[i] = input_value<T>(ctx, ctx.rank, i);
}

template <typename T>
CheckResult verify_typed(const CheckContext& ctx, const void* out) {
  CheckResult r;
  const T* p = static_cast<const T*>(out);
  for (std::uint64_t j = 0; j < ctx.layout.out_elems; ++j) {
    // Exact comparison, floats too: the patterns are small integers.
    if (p[j] != expected_value<T>(ctx, j)) {
      if (r.wrong == 0) r.first_wrong_index = j;
      ++r.wrong;
    }
  }
  return r;
}

template <typename F>
auto dispatch(Dtype dtype, F&& f) {
  switch (dtype) {
    case Dtype::int8:
      return f(std::int8_t{});
    case Dtype::uint8:
      return f(std::uint8_t{});
    case Dtype::int32:
      return f(std::int32_t{});
    case Dtype::uint32:
      return f(std::uint32_t{});
    case Dtype::int64:
      return f(std::int64_t{});
    case Dtype::uint64:
      return f(std::uint64_t{});
    case Dtype::float32:
      return f(float{});
    case Dtype::float64:
      return f(double{});
    default:
      throw UsageError("datatype " + std::string(name(dtype)) + " has no host check; use a host datatype");
  }
}

}  // namespace

bool host_checkable(Dtype dtype) {
  switch (dtype) {
    case Dtype::half:
    case Dtype::bfloat16:
    case Dtype::fp8_e4m3:
    case Dtype::fp8_e5m2:
      return false;
    default:
      return true;
  }
}

bool has_checked_output(const CheckContext& ctx) {
  if (ctx.op == Op::reduce) return ctx.rank == ctx.root;
  if (is_pair_op(ctx.op)) return ctx.source >= 0;
  return true;
}

void fill_for_check(const CheckContext& ctx, void* in, void* out) {
  dispatch(ctx.dtype, [&](auto tag) { fill_typed<decltype(tag)>(ctx, in, out); });
}

CheckResult verify_output(const CheckContext& ctx, const void* out) {
  if (!has_checked_output(ctx)) return {};
  return dispatch(ctx.dtype, [&](auto tag) { return verify_typed<decltype(tag)>(ctx, out); });
}

}  // namespace fb

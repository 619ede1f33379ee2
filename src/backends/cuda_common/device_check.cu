#define FB_HD __host__ __device__

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <memory>
#include <type_traits>

#include "device_check.hpp"
#include "fabricbench/core/check_inexact.hpp"
#include "gpu_error.hpp"
#include "launch.cuh"

namespace fb::gpu {
namespace {

// cudaFree on the way out; its own error has nowhere to go (a first error is already on its way).
struct DeviceFree {
  void operator()(void* p) const { cudaFree(p); }
};

// The arithmetic type a datatype's expectation is computed in: float for the
// 16- and 8-bit floats, the type itself otherwise.
template <typename S>
struct Arith {
  using Compute = S;
};
template <>
struct Arith<__half> {
  using Compute = float;
};
template <>
struct Arith<__nv_bfloat16> {
  using Compute = float;
};
template <>
struct Arith<__nv_fp8_e4m3> {
  using Compute = float;
};
template <>
struct Arith<__nv_fp8_e5m2> {
  using Compute = float;
};

// Rounds the expectation to the datatype first (e5m2 holds 9 as 8, on both
// sides), then judges as every check does (check::matches).
template <typename S>
__device__ bool matches(S got, typename Arith<S>::Compute want, const CheckContext& ctx) {
  using C = typename Arith<S>::Compute;
  const C stored = static_cast<C>(static_cast<S>(want));
  if constexpr (std::is_integral_v<C>) return static_cast<C>(got) == stored;  // exact, in the type's own width
  return check::matches(static_cast<double>(static_cast<C>(got)), static_cast<double>(stored), ctx);
}

template <typename S>
__global__ void fill_kernel(CheckContext ctx, S* in) {
  using C = typename Arith<S>::Compute;
  for (std::uint64_t i = global_index(); i < ctx.layout.in_elems; i += global_stride())
    in[i] = static_cast<S>(check::input_value<C>(ctx, ctx.rank, i));
}

template <typename S>
__global__ void verify_kernel(CheckContext ctx, const S* out, unsigned long long* wrong) {
  using C = typename Arith<S>::Compute;
  unsigned long long mine = 0;
  for (std::uint64_t j = global_index(); j < ctx.layout.out_elems; j += global_stride())
    if (!matches<S>(out[j], check::expected_value<C>(ctx, j), ctx)) ++mine;
  for (int offset = 16; offset > 0; offset /= 2) mine += __shfl_down_sync(0xffffffffu, mine, offset);
  if ((threadIdx.x & 31) == 0 && mine > 0) atomicAdd(wrong, mine);
}

struct DeviceNarrow {
  using half = __half;
  using bfloat16 = __nv_bfloat16;
  using e4m3 = __nv_fp8_e4m3;
  using e5m2 = __nv_fp8_e5m2;
};

}  // namespace

void fill_input(const CheckContext& ctx, void* in, cudaStream_t stream, int device) {
  if (ctx.layout.in_elems == 0 || !check::has_input(ctx)) return;
  visit_dtype<DeviceNarrow>(ctx.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    fill_kernel<S><<<grid_for(ctx.layout.in_elems), kBlock, 0, stream>>>(ctx, static_cast<S*>(in));
  });
  check_launch("the check's fill kernel", device);
}

void poison(void* out, std::size_t bytes, cudaStream_t stream, int device) {
  if (bytes == 0) return;
  // Byte-wise, by the driver: the output may start at any element boundary
  // (in-place reduce_scatter writes its block at rank x block x element size,
  // 2-byte aligned for bfloat16 over 3 ranks), where 4-byte stores would be a
  // misaligned address and a sticky error.
  check(cudaMemsetAsync(out, pattern::kPoisonByte, bytes, stream), "cudaMemsetAsync (the check's poison)", device);
}

std::uint64_t count_wrong(const CheckContext& ctx, const void* out, cudaStream_t stream, int device) {
  if (ctx.layout.out_elems == 0) return 0;
  // Owned: freed on every way out, a throw included.
  unsigned long long* raw = nullptr;
  check(cudaMalloc(&raw, sizeof(*raw)), "cudaMalloc", device);
  const std::unique_ptr<unsigned long long, DeviceFree> owned(raw);
  unsigned long long* counter = owned.get();
  unsigned long long wrong = 0;
  {
    check(cudaMemsetAsync(counter, 0, sizeof(*counter), stream), "cudaMemsetAsync", device);
    visit_dtype<DeviceNarrow>(ctx.dtype, [&](auto tag) {
      using S = typename decltype(tag)::type;
      verify_kernel<S><<<grid_for(ctx.layout.out_elems), kBlock, 0, stream>>>(ctx, static_cast<const S*>(out),
                                                                             counter);
    });
    check_launch("the check's verify kernel", device);
    check(cudaMemcpyAsync(&wrong, counter, sizeof(wrong), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync", device);
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize", device);
  }
  return wrong;
}

void corrupt_element(Dtype dtype, void* out, std::uint64_t index, int device) {
  const std::size_t word = dtype_bytes(dtype);
  auto* high = static_cast<unsigned char*>(out) + index * word + (word - 1);
  unsigned char byte = 0;
  check(cudaMemcpy(&byte, high, 1, cudaMemcpyDefault), "cudaMemcpy", device);
  byte ^= 0x40;  // a high exponent or magnitude bit in every datatype
  check(cudaMemcpy(high, &byte, 1, cudaMemcpyDefault), "cudaMemcpy", device);
}

}  // namespace fb::gpu

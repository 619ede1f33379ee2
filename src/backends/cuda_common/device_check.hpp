// The --check of the GPU backends, done on the device: patterned inputs are
// written by a kernel and outputs are compared element by element against
// the same expected values as the host check (check_values.hpp), counting
// wrong elements on the GPU. Only the count comes back to the host.
//
// Pointers must be device-accessible: device memory or mapped pinned host
// memory. Exact comparison throughout, except avg over a rank count that is
// not a power of two in floating point (see check::avg_is_exact), and sums
// past the datatype's exact range (check_inexact.hpp: fp8 at 9+ / 17+ ranks).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "fabricbench/core/check_values.hpp"

namespace fb::gpu {

// Writes this rank's input pattern (ctx.layout.in_elems elements) into `in`;
// nothing where the op ignores this rank's input (check::has_input).
void fill_input(const CheckContext& ctx, void* in, cudaStream_t stream, int device);
// Writes the poison byte over `bytes` of `out` (any alignment).
void poison(void* out, std::size_t bytes, cudaStream_t stream, int device);
// Wrong elements among ctx.layout.out_elems of `out`; synchronises the stream.
std::uint64_t count_wrong(const CheckContext& ctx, const void* out, cudaStream_t stream, int device);
// Flips a high bit of element `index` of `out` (any memory), for fault-injection tests.
void corrupt_element(Dtype dtype, void* out, std::uint64_t index, int device);

}  // namespace fb::gpu

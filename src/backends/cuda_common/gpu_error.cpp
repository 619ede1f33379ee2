#include "gpu_error.hpp"

#include <fmt/format.h>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"

namespace fb::gpu {

void throw_cuda_error(const char* call, cudaError_t rc, int device) {
  throw RunError(error_text(call, fmt::format("{}: {}", cudaGetErrorName(rc), cudaGetErrorString(rc)), device));
}

void check_launch(const char* kernel, int device) { check(cudaGetLastError(), kernel, device); }

}  // namespace fb::gpu

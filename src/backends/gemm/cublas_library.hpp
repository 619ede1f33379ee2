// BlasLibrary on cuBLAS (loaded at first use, cublas_loaded.hpp) and the
// CUDA runtime: each call forwards and checks its return code; the
// decisions stay in the GEMM code above it (blas.hpp).
#pragma once

#include "blas.hpp"

namespace fb::gpu {

BlasLibrary& cublas_library();

}  // namespace fb::gpu

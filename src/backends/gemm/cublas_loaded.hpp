// cuBLAS, loaded on first use instead of linked. Linking it ran cuBLAS Lt's
// static initialisers in every process at start-up (0.4 s on the development
// machine, bench/scripts/bench-startup.sh), so every `fabricbench run` paid for a
// GEMM it never ran. Only the calls the GEMM runner makes are looked up.
#pragma once

#include <cublas_v2.h>

namespace fb::gpu {

// The C entry point (the header adds a C++ overload taking cudaDataType).
using CublasGemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                        const void*, const void*, cudaDataType, int, const void*, cudaDataType, int,
                                        const void*, void*, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

struct CublasCalls {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasSetStream_v2) set_stream = nullptr;
  CublasGemmEx gemm_ex = nullptr;
  decltype(&::cublasGetStatusName) status_name = nullptr;
  decltype(&::cublasGetStatusString) status_string = nullptr;
};

// The loaded library's calls (loaded once, thread-safe). Throws RunError
// naming the library and dlopen's reason when it cannot be loaded.
const CublasCalls& cublas();

}  // namespace fb::gpu

// cuBLAS and cuBLASLt, loaded on first use instead of linked. Linking it ran cuBLAS Lt's
// static initialisers in every process at start-up (0.4 s on the development
// machine, bench/scripts/bench-startup.sh), so every `fabricbench run` paid for a
// GEMM it never ran. Only the calls the GEMM runner makes are looked up.
#pragma once

#include <cublasLt.h>
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

// cuBLASLt, for the products cublasGemmEx has no kernel for (fp8).
struct CublasLtCalls {
  decltype(&::cublasLtCreate) create = nullptr;
  decltype(&::cublasLtDestroy) destroy = nullptr;
  decltype(&::cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) preference_create = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) preference_destroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) preference_set = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&::cublasLtMatmul) matmul = nullptr;
};

// The loaded library's calls (loaded once, thread-safe). Throws RunError
// naming the library and dlopen's reason when it cannot be loaded.
const CublasCalls& cublas();
const CublasLtCalls& cublas_lt();

}  // namespace fb::gpu

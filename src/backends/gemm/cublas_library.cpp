#include "cublas_library.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "cublas_loaded.hpp"
#include "cuda_common/cuda_devices.hpp"
#include "cuda_common/cuda_stream.hpp"
#include "cuda_common/gpu_error.hpp"
#include "fabricbench/core/errors.hpp"
#include "gemm_fill.hpp"

namespace fb::gpu {
namespace {

// Our datatype's name in CUDA's terms; a type with none is a caller's error.
cudaDataType_t cuda_type(Dtype dtype, const char* call, int device) {
  switch (dtype) {
    case Dtype::bfloat16:
      return CUDA_R_16BF;
    case Dtype::half:
      return CUDA_R_16F;
    case Dtype::float32:
      return CUDA_R_32F;
    case Dtype::fp8_e4m3:
      return CUDA_R_8F_E4M3;
    case Dtype::int8:  // every enumerator named: a new dtype is a compile warning here, not a silent refusal
    case Dtype::uint8:
    case Dtype::int32:
    case Dtype::uint32:
    case Dtype::int64:
    case Dtype::uint64:
    case Dtype::float64:
    case Dtype::fp8_e5m2:
      break;
  }
  throw RunError(error_text(call, fmt::format("no CUDA matrix type for {}", name(dtype)), device));
}

// CUBLAS_COMPUTE_32F: sums in fp32 as stored, not the TF32 of _FAST_TF32.
cublasComputeType_t compute_type(Dtype accumulate, int device) {
  if (accumulate == Dtype::float32) return CUBLAS_COMPUTE_32F;
  throw RunError(error_text("cublasGemmEx", fmt::format("no cuBLAS compute type for {}", name(accumulate)), device));
}

void check_cublas(cublasStatus_t rc, const char* call, int device) {
  if (rc != CUBLAS_STATUS_SUCCESS)
    throw RunError(
        error_text(call, fmt::format("{}: {}", cublas().status_name(rc), cublas().status_string(rc)), device));
}

// The products cublasGemmEx has no kernel for (fp8 inputs) go through
// cuBLASLt. Its plan (descriptors, layouts and the heuristic's algorithm) is
// made at a shape's first product and kept while the shape repeats, so a
// timed loop queues cublasLtMatmul alone, as cublasGemmEx does.
class LtPlan {
 public:
  LtPlan(cublasLtHandle_t lt, const MatrixProduct& p, std::size_t workspace_bytes, int device) : p_(p) {
    try {
      make(lt, workspace_bytes, device);
    } catch (...) {
      release();  // no destructor runs for a constructor that throws
      throw;
    }
  }
  ~LtPlan() { release(); }
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;

  // The same product but for the matrices' addresses.
  bool plans(const MatrixProduct& p) const {
    return p.m == p_.m && p.n == p_.n && p.k == p_.k && p.dtype == p_.dtype && p.c_dtype == p_.c_dtype &&
           p.accumulate == p_.accumulate && p.a_transposed == p_.a_transposed && p.lda == p_.lda && p.ldb == p_.ldb &&
           p.ldc == p_.ldc;
  }
  void queue(cublasLtHandle_t lt, const MatrixProduct& p, void* workspace, std::size_t workspace_bytes,
             cudaStream_t stream, int device) const {
    const float alpha = 1.0f;
    const float beta = 0.0f;
    check_cublas(cublas_lt().matmul(lt, desc_, &alpha, p.a, a_, p.b, b_, &beta, p.c, c_, p.c, c_, &algo_, workspace,
                                    workspace_bytes, stream),
                 "cublasLtMatmul", device);
  }

 private:
  void make(cublasLtHandle_t lt, std::size_t workspace_bytes, int device) {
    const auto& c = cublas_lt();
    const auto ok = [device](cublasStatus_t rc, const char* call) { check_cublas(rc, call, device); };
    ok(c.desc_create(&desc_, compute_type(p_.accumulate, device), CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t transa = p_.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    ok(c.desc_set(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa), "cublasLtMatmulDescSetAttribute");
    const int a_rows = p_.a_transposed ? p_.k : p_.m;
    const int a_cols = p_.a_transposed ? p_.m : p_.k;
    const char* layout = "cublasLtMatrixLayoutCreate";
    ok(c.layout_create(&a_, cuda_type(p_.dtype, layout, device), a_rows, a_cols, p_.lda), layout);
    ok(c.layout_create(&b_, cuda_type(p_.dtype, layout, device), p_.k, p_.n, p_.ldb), layout);
    ok(c.layout_create(&c_, cuda_type(p_.c_dtype, layout, device), p_.m, p_.n, p_.ldc), layout);
    cublasLtMatmulPreference_t pref = nullptr;
    ok(c.preference_create(&pref), "cublasLtMatmulPreferenceCreate");
    cublasStatus_t rc =
        c.preference_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes, sizeof workspace_bytes);
    cublasLtMatmulHeuristicResult_t found{};
    int count = 0;
    if (rc == CUBLAS_STATUS_SUCCESS) rc = c.heuristic(lt, desc_, a_, b_, c_, c_, pref, 1, &found, &count);
    c.preference_destroy(pref);
    ok(rc, "cublasLtMatmulAlgoGetHeuristic");
    if (count < 1)
      throw RunError(error_text("cublasLtMatmulAlgoGetHeuristic",
                                fmt::format("no {} kernel for {}x{}x{} on this GPU; fp8 products need compute "
                                            "capability 8.9 or newer (Ada, Hopper, Blackwell)",
                                            name(p_.dtype), p_.m, p_.n, p_.k),
                                device));
    algo_ = found.algo;
  }
  void release() {                            // teardown: nothing left to report to
    if (!desc_ && !a_ && !b_ && !c_) return;  // nothing made (cuBLASLt itself may not have loaded)
    const auto& c = cublas_lt();
    for (cublasLtMatrixLayout_t l : {a_, b_, c_})
      if (l) c.layout_destroy(l);
    if (desc_) c.desc_destroy(desc_);
    a_ = b_ = c_ = nullptr;
    desc_ = nullptr;
  }

  MatrixProduct p_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

class Cublas final : public Blas {
 public:
  Cublas(DeviceStream& stream, int device) : device_(device), stream_(raw_stream(stream)) {
    check_cublas(cublas().create(&handle_), "cublasCreate", device);
    check_cublas(cublas().set_stream(handle_, stream_), "cublasSetStream", device);
  }
  ~Cublas() override {  // teardown: nothing left to report to
    plan_.reset();
    if (workspace_) cudaFree(workspace_);
    if (lt_) cublas_lt().destroy(lt_);
    if (handle_) cublas().destroy(handle_);
  }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  void product(const MatrixProduct& p) override {
    if (p.dtype == Dtype::fp8_e4m3) return lt_product(p);
    if (p.c_dtype != p.dtype)
      throw RunError(
          error_text("cublasGemmEx", fmt::format("C of {} from {} inputs", name(p.c_dtype), name(p.dtype)), device_));
    const float alpha = 1.0f;  // host scalars in the compute type's precision
    const float beta = 0.0f;
    const cudaDataType_t type = cuda_type(p.dtype, "cublasGemmEx", device_);
    check_cublas(cublas().gemm_ex(handle_, p.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, p.m, p.n, p.k,
                                  &alpha, p.a, type, p.lda, p.b, type, p.ldb, &beta, p.c, type, p.ldc,
                                  compute_type(p.accumulate, device_), CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx", device_);
  }

 private:
  // 32 MiB: what NVIDIA's cuBLAS documentation recommends for Hopper, where
  // the fastest kernels need it; less leaves them out of the heuristic's choice.
  static constexpr std::size_t kLtWorkspaceBytes = std::size_t{32} << 20;

  void lt_product(const MatrixProduct& p) {
    if (!lt_) check_cublas(cublas_lt().create(&lt_), "cublasLtCreate", device_);
    if (!workspace_) check(cudaMalloc(&workspace_, kLtWorkspaceBytes), "cudaMalloc (the cuBLASLt workspace)", device_);
    if (!plan_ || !plan_->plans(p)) {
      plan_.reset();
      plan_ = std::make_unique<LtPlan>(lt_, p, kLtWorkspaceBytes, device_);
    }
    plan_->queue(lt_, p, workspace_, kLtWorkspaceBytes, stream_, device_);
  }

  int device_;
  cudaStream_t stream_;
  cublasHandle_t handle_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  void* workspace_ = nullptr;
  std::unique_ptr<LtPlan> plan_;
};

class CublasLibrary final : public BlasLibrary {
 public:
  std::unique_ptr<Blas> open(DeviceStream& stream, int device) override {
    DeviceGuard on(device);  // cublasCreate binds the handle to the current device
    return std::make_unique<Cublas>(stream, device);
  }
  void random_fill(int device, Dtype dtype, void* data, std::uint64_t n, std::uint64_t seed) override {
    cuda_type(dtype, "the GEMM input fill kernel", device);  // the kernel's types are the matrices'
    DeviceGuard on(device);
    gpu::random_fill(dtype, data, n, seed, device);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device);
  }
};

}  // namespace

BlasLibrary& cublas_library() {
  static CublasLibrary library;
  return library;
}

}  // namespace fb::gpu

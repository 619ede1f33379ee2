// A build without CUDA: the GPU backends stay in the registry and say why
// they cannot run here, so `--backend nccl` gets a reason, not "unknown".
#include "fabricbench/core/errors.hpp"
#include "fabricbench/version.hpp"
#include "gemm/gemm_compute.hpp"
#include "gemm/gemm_probe.hpp"
#include "gpu_backends.hpp"

namespace fb {
namespace {

BackendInfo absent(const char* name, const char* summary, std::span<const Op> default_ops = {}) {
  return {name, summary, [] { return std::string(kGpuAbsentReason); }, nullptr, default_ops};
}

}  // namespace

std::string gpu_absent_reason() { return kGpuAbsentReason; }

Support place_on_gpu(const Comm&, int, GpuPlacement&) { return Support::no(kGpuAbsentReason); }
int current_gpu() { return -1; }

BackendInfo nccl_backend_info() { return absent("nccl", "NCCL collectives on device buffers (needs CUDA and NCCL)"); }
// The same default ops as with CUDA: options resolve alike in every build.
BackendInfo cuda_copy_backend_info() { return absent("cuda", "copy paths inside a GPU node (needs CUDA)", copy_ops()); }
BackendInfo mpi_cuda_backend_info() { return absent("mpi-cuda", "MPI on device buffers (needs CUDA)"); }

GemmResult run_gemm(const GemmSpec&, int) { throw UsageError(kGpuAbsentReason); }
std::unique_ptr<GemmCompute> make_gemm_compute(const GemmSpec&, int) { throw UsageError(kGpuAbsentReason); }

}  // namespace fb

#include "mpi_cuda_backend.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <mpi.h>

// Open MPI and MPICH declare their GPU queries in mpi-ext.h.
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include "cuda_common/device_check.hpp"
#include "cuda_common/gpu_backend.hpp"
#include "cuda_common/gpu_error.hpp"
#include "cuda_common/cuda_devices.hpp"
#include "cuda_common/gpu_memory.hpp"
#include "gpu_backends.hpp"
#include "mpi_host/mpi_op.hpp"
#include "mpi_host/mpi_path.hpp"

namespace fb {
namespace {

// MpiOp with the check on the device: the buffers are device memory.
class MpiDeviceOp final : public MpiOp {
 public:
  MpiDeviceOp(MPI_Comm comm, const OpSpec& spec, void* in, void* out, int device)
      : MpiOp(comm, spec, in, out), device_(device) {}

  void fill_check() override {
    const CheckContext ctx = check_context();
    gpu::poison(result(), spec().layout.out_elems * dtype_bytes(spec().dtype), nullptr, device_);
    gpu::fill_input(ctx, input(), nullptr, device_);
    gpu::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device_);
  }

  std::uint64_t count_wrong() override {
    const CheckContext ctx = check_context();
    return has_checked_output(ctx) ? gpu::count_wrong(ctx, result(), nullptr, device_) : 0;
  }

  void corrupt_output_element(std::uint64_t index) override {
    if (index < spec().layout.out_elems) gpu::corrupt_element(spec().dtype, result(), index, device_);
  }

 private:
  int device_;
};

class MpiCudaGroup final : public BackendGroup {
 public:
  MpiCudaGroup(const Comm& comm, int device)
      : comm_(comm.dup()),
        path_(mpi_path(comm_)),
        device_(device),
        in_(gpu::cuda_devices(), gpu::MemoryKind::device, device),
        out_(gpu::cuda_devices(), gpu::MemoryKind::device, device) {}

  void reserve(std::uint64_t, std::uint64_t) override {}

  Support allocate(const OpSpec& spec) override { return gpu::make_room(in_, out_, spec); }

  std::unique_ptr<PreparedOp> prepare(const OpSpec& spec) override {
    return std::make_unique<MpiDeviceOp>(comm_.native(), spec, in_.data(), out_.data(), device_);
  }

  std::string path() const override { return path_ + " (device buffers)"; }

 private:
  Comm comm_;
  std::string path_;
  int device_;
  gpu::Buffer in_;
  gpu::Buffer out_;
};

class MpiCudaBackend final : public gpu::GpuBackend {
 public:
  MpiCudaBackend() : GpuBackend(gpu::cuda_devices()) {}
  std::string_view name() const override { return "mpi-cuda"; }
  std::string version() const override { return MpiSession::library_version(); }

  Support setup(const Comm& world, const RunOptions& options) override {
    if (options.graph)
      return Support::no("--graph: MPI calls cannot be captured in a CUDA graph; it applies to nccl and cuda");
    return GpuBackend::setup(world, options);
  }

  OpSet ops() const override { return kMpiOps; }
  std::string_view elsewhere() const override { return kMpiElsewhere; }
  Support supports(const OpSpec& spec) const override { return mpi_supports(spec, name()); }
  std::unique_ptr<BackendGroup> open(const Comm& comm) override {
    return std::make_unique<MpiCudaGroup>(comm, gpu_.device);
  }
};

}  // namespace

std::string mpi_cuda_awareness() {
  const std::string library = MpiSession::library_version();
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  if (MPIX_Query_cuda_support() == 1) return {};
  return fmt::format("the MPI library ({}) is not CUDA-aware: MPIX_Query_cuda_support() returns 0", library);
#elif defined(MPIX_GPU_SUPPORT_CUDA)
  int supported = 0;
  if (MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &supported) == MPI_SUCCESS && supported) return {};
  return fmt::format("the MPI library ({}) is not CUDA-aware: MPIX_GPU_query_support(CUDA) says no", library);
#else
  return fmt::format("the MPI library ({}) offers no way to ask whether it is CUDA-aware", library);
#endif
}

std::unique_ptr<Backend> make_mpi_cuda_backend() { return std::make_unique<MpiCudaBackend>(); }

}  // namespace fb

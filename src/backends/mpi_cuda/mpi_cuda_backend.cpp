#include "mpi_cuda_backend.hpp"

#include <fmt/format.h>
#include <mpi.h>

// Open MPI and MPICH declare their GPU queries in mpi-ext.h.
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include "cuda_common/devices.hpp"
#include "cuda_common/gpu_backend.hpp"
#include "cuda_common/gpu_memory.hpp"
#include "gpu_backends.hpp"
#include "mpi_host/mpi_op.hpp"
#include "mpi_host/mpi_path.hpp"

namespace fb {
namespace {

// MpiOp with the check on the device, through the device layer: the buffers
// are device memory (host memory under the test doubles).
class MpiDeviceOp final : public MpiOp {
 public:
  MpiDeviceOp(MPI_Comm comm, const OpSpec& spec, void* in, void* out, gpu::Devices& devices, int device)
      : MpiOp(comm, spec, in, out), devices_(devices), device_(device) {}

  void fill_check() override {
    const CheckContext ctx = check_context();
    // Poison first: in-place inputs share the output buffer and must survive.
    devices_.poison(device_, result(), spec().layout.out_elems * dtype_bytes(spec().dtype));
    devices_.fill_input(device_, ctx, input());
  }

  std::uint64_t count_wrong() override {
    const CheckContext ctx = check_context();
    return has_checked_output(ctx) ? devices_.count_wrong(device_, ctx, result()) : 0;
  }

  void corrupt_output_element(std::uint64_t index) override {
    if (index < spec().layout.out_elems) devices_.corrupt_element(device_, spec().dtype, result(), index);
  }

 private:
  gpu::Devices& devices_;
  int device_;
};

class MpiCudaGroup final : public BackendGroup {
 public:
  MpiCudaGroup(const Comm& comm, gpu::Devices& devices, int device)
      : comm_(comm.dup()),
        path_(mpi_path(comm_)),
        devices_(devices),
        device_(device),
        in_(devices, gpu::MemoryKind::device, device),
        out_(devices, gpu::MemoryKind::device, device) {}

  void reserve(std::uint64_t, std::uint64_t) override {}

  Support allocate(const OpSpec& spec) override { return gpu::make_room(in_, out_, spec); }

  std::unique_ptr<PreparedOp> prepare(const OpSpec& spec) override {
    return std::make_unique<MpiDeviceOp>(comm_.native(), spec, in_.data(), out_.data(), devices_, device_);
  }

  std::string path() const override { return path_ + " (device buffers)"; }

 private:
  Comm comm_;
  std::string path_;
  gpu::Devices& devices_;
  int device_;
  gpu::Buffer in_;
  gpu::Buffer out_;
};

class MpiCudaBackend final : public gpu::GpuBackend {
 public:
  explicit MpiCudaBackend(gpu::Devices& devices) : GpuBackend(devices) {}
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
    return std::make_unique<MpiCudaGroup>(comm, devices_, gpu_.device);
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

std::unique_ptr<Backend> make_mpi_cuda_backend(gpu::Devices& devices) {
  return std::make_unique<MpiCudaBackend>(devices);
}

}  // namespace fb

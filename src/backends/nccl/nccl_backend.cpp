#include "nccl_backend.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "cuda_common/gpu_backend.hpp"
#include "cuda_common/gpu_error.hpp"
#include "cuda_common/gpu_memory.hpp"
#include "gpu_backends.hpp"
#include "nccl_debug.hpp"
#include "nccl_log.hpp"
#include "nccl_op.hpp"
#include "nccl_types.hpp"

namespace fb {
namespace {

class NcclGroup final : public BackendGroup {
 public:
  NcclGroup(const Comm& comm, int device, bool graph)
      : comm_(comm.dup()), device_(device), graph_(graph), in_(gpu::MemoryKind::device, device),
        out_(gpu::MemoryKind::device, device) {
    NcclDebugLog& log = NcclDebugLog::get();  // before the first NCCL call of the process
    log_offset_ = log.start_offset();
    ncclUniqueId id{};
    if (comm_.rank() == 0) nccl::check(ncclGetUniqueId(&id), "ncclGetUniqueId", nullptr, device_);
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, comm_.native());
    gpu::check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", device_);
    ncclComm_t c = nullptr;
    nccl::check(ncclCommInitRank(&c, comm_.size(), id, comm_.rank()), "ncclCommInitRank", nullptr, device_);
    nccl_.store(c);
  }

  ~NcclGroup() override {
    if (ncclComm_t c = nccl_.exchange(nullptr)) ncclCommDestroy(c);
    if (stream_) cudaStreamDestroy(stream_);
  }

  void reserve(std::uint64_t in_bytes, std::uint64_t out_bytes) override {
    // The largest size may not fit: then allocate() sizes the buffers, and skips, per size.
    const std::uint64_t bytes = std::max(in_bytes, out_bytes);
    if (!in_.grow(bytes).empty() || !out_.grow(bytes).empty()) {
      in_.release();
      out_.release();
    }
  }

  Support allocate(const OpSpec& spec) override { return gpu::make_room(in_, out_, spec); }

  std::unique_ptr<PreparedOp> prepare(const OpSpec& spec) override {
    NcclOpContext c;
    c.comm = nccl_.load();
    c.stream = stream_;
    c.device = device_;
    c.rank = comm_.rank();
    c.nranks = comm_.size();
    c.graph = graph_;
    c.in = in_.data();
    c.out = out_.data();
    return std::make_unique<NcclOp>(c, spec);
  }

  // The hang watchdog's thread, while the engine's may be blocked in an NCCL
  // call or a stream wait: ncclCommAbort stops the communicator's kernels and
  // frees it, so the device is released; the process exits right after.
  void abort() override {
    if (ncclComm_t c = nccl_.exchange(nullptr)) ncclCommAbort(c);
  }

  // Read again for every row: NCCL connects peers lazily, at the first op that needs them.
  std::string path() const override {
    const NcclLogFacts facts = parse_nccl_log(NcclDebugLog::get().read_from(log_offset_));
    return fmt::format("{} NCCL {}{}", describe_nccl_path(facts, comm_.size()), nccl::version(),
                       pinned_tuning(std::getenv("NCCL_ALGO"), std::getenv("NCCL_PROTO")));
  }

 private:
  Comm comm_;
  int device_;
  bool graph_;
  std::uint64_t log_offset_ = 0;
  cudaStream_t stream_ = nullptr;
  std::atomic<ncclComm_t> nccl_{nullptr};  // abort() swaps it out from the watchdog's thread
  gpu::Buffer in_;
  gpu::Buffer out_;
};

class NcclBackend final : public gpu::GpuBackend {
 public:
  std::string_view name() const override { return "nccl"; }
  std::string version() const override { return nccl::version(); }

  Support setup(const Comm& world, const RunOptions& options) override {
    NcclDebugLog::get();  // NCCL reads its debug settings at its first call, which comes later
    return GpuBackend::setup(world, options);
  }

  OpSet ops() const override { return kNcclOps; }
  std::string_view elsewhere() const override { return "copy paths inside a node run on --backend cuda"; }

  Support supports(const OpSpec& spec) const override {
    if (!nccl::datatype(spec.dtype))
      return Support::no(fmt::format("NCCL {} has no {} datatype", nccl::version(), fb::name(spec.dtype)));
    const bool fp8 = spec.dtype == Dtype::fp8_e4m3 || spec.dtype == Dtype::fp8_e5m2;
    if (fp8 && is_reduction(spec.op) && gpu_.cc_major > 0 && gpu_.cc_major < 9)
      return Support::no(fmt::format("NCCL reduces fp8 on compute capability 9.0 and later; this GPU is {}.{}",
                                     gpu_.cc_major, gpu_.cc_minor));
    if (spec.in_place && spec.op == Op::alltoall)
      return Support::no("NCCL's alltoall has no in-place form: alltoall runs out-of-place only on nccl");
    if (spec.in_place && spec.op == Op::sendrecv)
      return Support::no("a send and a receive on one buffer would race: sendrecv runs out-of-place only on nccl");
    return Support::yes();
  }

  std::unique_ptr<BackendGroup> open(const Comm& comm) override {
    return std::make_unique<NcclGroup>(comm, gpu_.device, graph_);
  }
};

}  // namespace

std::unique_ptr<Backend> make_nccl_backend() { return std::make_unique<NcclBackend>(); }

BackendInfo nccl_backend_info() {
  return {"nccl", "NCCL collectives and point-to-point on device buffers, one rank per GPU", [] {
            return gpu_absent_reason();
          },
          make_nccl_backend};
}

}  // namespace fb

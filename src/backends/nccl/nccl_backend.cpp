#include "nccl_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <optional>

#include "cuda_common/gpu_backend.hpp"
#include "fabricbench/core/errors.hpp"
#include "cuda_common/gpu_memory.hpp"
#include "gpu_backends.hpp"
#include "nccl_comm.hpp"
#include "nccl_debug.hpp"
#include "nccl_log.hpp"
#include "nccl_op.hpp"

namespace fb {
namespace {

class NcclGroup final : public BackendGroup {
 public:
  // `nccl` is this rank's communicator of the group, split from the world's;
  // the first prepare() waits for it, polling, by when the watchdog can abort it.
  NcclGroup(gpu::Devices& devices, const Comm& comm, std::unique_ptr<NcclComm> nccl, std::uint64_t log_offset,
            int device, bool graph)
      : devices_(devices),
        comm_(comm.dup()),
        device_(device),
        graph_(graph),
        log_offset_(log_offset),
        stream_(devices.make_stream(device)),
        nccl_(std::move(nccl)),
        in_(devices, gpu::MemoryKind::device, device),
        out_(devices, gpu::MemoryKind::device, device) {}

  // The communicator goes before the stream its work was queued on.
  ~NcclGroup() override { nccl_.reset(); }

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
    row_offset_ = NcclDebugLog::get().size();  // this row's tuning lines start here
    row_op_ = spec.op;
    row_pair_ = is_pair_op(spec.op) ? std::optional<std::pair<int, int>>({spec.peer_a, spec.peer_b}) : std::nullopt;
    NcclOpContext c;
    c.comm = nccl_.get();
    c.devices = &devices_;
    c.stream = stream_.get();
    c.device = device_;
    c.rank = comm_.rank();
    c.nranks = comm_.size();
    c.graph = graph_;
    c.in = in_.data();
    c.out = out_.data();
    return std::make_unique<NcclOp>(c, spec);
  }

  // The hang watchdog's thread, while the engine's may be blocked waiting on
  // NCCL: only a flag, so it returns at once whatever NCCL does; the engine's
  // thread aborts the communicator at its next poll (nccl_comm.hpp).
  void abort() override { nccl_->request_abort(); }
  bool abort_ends_wait() const override { return true; }

  // Collective over the group, after the row's traffic: each member reads its
  // own log (NCCL logs a connection in the log of the rank that made it) and
  // the descriptions are merged, so the row names every transport of the
  // communicator; a point-to-point row only those between its two ranks. The tuning lines (NCCL_DEBUG_SUBSYS=TUNING)
  // are this row's.
  std::string path() const override {
    const NcclDebugLog& log = NcclDebugLog::get();
    const std::string text = log.read_from(log_offset_);
    NcclLogFacts facts = row_pair_ ? parse_nccl_log(text, row_pair_->first, row_pair_->second) : parse_nccl_log(text);
    facts.algorithms = parse_nccl_log(log.read_from(row_offset_)).algorithms;
    std::string merged = merge_nccl_paths(comm_.allgather_strings(describe_nccl_path(facts, comm_.size(), row_op_)));
    if (merged == "unknown") merged += log.unknown_hint();
    return fmt::format("{} NCCL {}{}", merged, nccl_->lib().version(),
                       pinned_tuning(std::getenv("NCCL_ALGO"), std::getenv("NCCL_PROTO")));
  }

 private:
  gpu::Devices& devices_;
  Comm comm_;
  int device_;
  bool graph_;
  std::uint64_t log_offset_ = 0;  // where this communicator's lines begin
  std::uint64_t row_offset_ = 0;
  Op row_op_ = Op::all_reduce;
  std::optional<std::pair<int, int>> row_pair_;  // a point-to-point row's two ranks
  std::unique_ptr<gpu::DeviceStream> stream_;
  std::unique_ptr<NcclComm> nccl_;
  gpu::Buffer in_;
  gpu::Buffer out_;
};

class NcclBackend final : public gpu::GpuBackend {
 public:
  NcclBackend(gpu::Devices& devices, nccl::Collectives& lib) : GpuBackend(devices), lib_(lib) {}
  std::string_view name() const override { return "nccl"; }
  std::string version() const override { return lib_.version(); }

  Support setup(const Comm& world, const RunOptions& options) override {
    NcclDebugLog::get();  // NCCL reads its debug settings at its first call, which comes later
    if (!world_.valid()) world_ = world.dup();
    return GpuBackend::setup(world, options);
  }
  std::vector<std::string> notes() const override { return NcclDebugLog::get().notes(); }

  OpSet ops() const override { return kNcclOps; }
  std::string_view elsewhere() const override { return "copy paths inside a node run on --backend cuda"; }
  // NCCL joins the GPUs of a multi-node NVLink domain over NVLink (MNNVL),
  // which the domain key (a completed fabric registration) says is there.
  DomainTraffic domain_traffic() const override { return DomainTraffic::nvlink; }

  Support supports(const OpSpec& spec) const override {
    if (!lib_.has_datatype(spec.dtype))
      return Support::no(fmt::format("NCCL {} has no {} datatype", lib_.version(), fb::name(spec.dtype)));
    const bool fp8 = spec.dtype == Dtype::fp8_e4m3 || spec.dtype == Dtype::fp8_e5m2;
    // The job's lowest GPU decides, not this rank's: a collective must run on every rank or none.
    if (fp8 && is_reduction(spec.op))
      if (const Support s = gpu::fp8_reduction_support(gpu_.lowest); !s.ok) return s;
    if (spec.in_place && spec.op == Op::alltoall)
      return Support::no("NCCL's alltoall has no in-place form: alltoall runs out-of-place only on nccl");
    if (spec.in_place && spec.op == Op::sendrecv)
      return Support::no("a send and a receive on one buffer would race: sendrecv runs out-of-place only on nccl");
    return Support::yes();
  }

  // Every group is split from one world communicator (ncclCommSplit), every
  // world rank taking part: members here, the others in skip_open(). The
  // colour is the group's lowest world rank, the key its rank in the group.
  std::unique_ptr<BackendGroup> open(const Comm& comm) override {
    NcclComm& parent = world_nccl();
    std::int64_t color = world_.rank();
    comm.allreduce_min_quiet({&color, 1});
    const std::uint64_t offset = NcclDebugLog::get().size();  // the child's lines come after this
    auto child = std::make_unique<NcclComm>(parent, static_cast<int>(color), comm.rank());
    return std::make_unique<NcclGroup>(devices_, comm, std::move(child), offset, gpu_.device, graph_);
  }
  void skip_open() override { NcclComm::split_out(world_nccl()); }
  // From the watchdog's thread: the world communicator's initialisation and
  // every split poll its abort flag (nccl_comm.cpp), so raising it ends a
  // hang there with ncclCommAbort on the engine's thread. An abort that
  // comes before the communicator exists (a signal that lands inside
  // ncclCommInitRankConfig's call) is kept in open_aborted_
  // and raised by world_nccl() once it does: both sides store, then load, so
  // one of them sees the other (sequentially consistent).
  void abort_open() override {
    open_aborted_.store(true);
    if (NcclComm* world = abortable_.load()) world->request_abort();
  }
  // The flag alone ends nothing: the engine's thread aborts at its next poll,
  // which a process about to end waits for. Before the unique id's broadcast
  // has ended the engine's thread is inside MPI and never polls: nothing is
  // to be aborted, and a wait would only run out its 2 s. From then on it is
  // making the communicator, which it aborts (by open_aborted_) once the
  // initialising call returns: waited for, or a process that ended first
  // (a loaded machine, the call slow to return) dropped it unaborted.
  bool abort_open_ends_wait() const override { return making_world_.load(); }

 private:
  // The world's communicator, the parent of every group's: created at the
  // first open (every world rank is there), used for nothing else.
  NcclComm& world_nccl() {
    if (world_nccl_) return *world_nccl_;
    if (!world_.valid()) throw RunError("the nccl backend was not set up (setup() comes before open())");
    const std::string id = world_.bcast_string_quiet(world_.rank() == 0 ? lib_.unique_id() : std::string(), 0);
    making_world_.store(true);
    world_nccl_ = std::make_unique<NcclComm>(lib_, world_.size(), id, world_.rank(), gpu_.device);
    abortable_.store(world_nccl_.get());
    if (open_aborted_.load()) world_nccl_->request_abort();
    world_nccl_->ready();
    return *world_nccl_;
  }

  nccl::Collectives& lib_;
  Comm world_;
  std::unique_ptr<NcclComm> world_nccl_;
  std::atomic<NcclComm*> abortable_{nullptr};  // world_nccl_, for the watchdog's thread
  std::atomic<bool> open_aborted_{false};      // abort_open() was called, for world_nccl()
  std::atomic<bool> making_world_{false};      // world_nccl() is past the broadcast, making world_nccl_
};

}  // namespace

std::unique_ptr<Backend> make_nccl_backend(gpu::Devices& devices, nccl::Collectives& lib) {
  return std::make_unique<NcclBackend>(devices, lib);
}

}  // namespace fb

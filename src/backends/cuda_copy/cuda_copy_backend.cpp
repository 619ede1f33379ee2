#include "cuda_copy_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "copy_op.hpp"
#include "cuda_common/gpu_backend.hpp"
#include "cuda_common/gpu_memory.hpp"
#include "cuda_common/placement_rules.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/sizes.hpp"
#include "gpu_backends.hpp"
#include "mpi_host/host_memory.hpp"

namespace fb {
namespace {

using gpu::Buffer;
using gpu::MemoryKind;

using gpu::RankGpu;

// Where each rank of the group runs, for copies to a peer's GPU.
std::vector<RankGpu> gather_gpus(const Comm& comm, const GpuPlacement& gpu) {
  std::vector<RankGpu> out;
  for (const auto& text : comm.allgather_strings(fmt::format(
           "{} {} {}", gpu.device, gpu.pci_bus_id.empty() ? "-" : gpu.pci_bus_id, node_name(Comm::world().rank())))) {
    std::istringstream fields(text);
    RankGpu r;
    fields >> r.device >> r.bus_id >> r.host;
    if (r.bus_id == "-") r.bus_id.clear();
    out.push_back(r);
  }
  return out;
}

class CopyGroup final : public BackendGroup {
 public:
  CopyGroup(gpu::Devices& devices, const Comm& comm, const GpuPlacement& gpu, bool graph, std::string host_root)
      : devices_(devices),
        comm_(comm.dup()),
        gpu_(gpu),
        graph_(graph),
        gpus_(gather_gpus(comm_, gpu)),
        dev_a_(devices, MemoryKind::device, gpu.device),
        dev_b_(devices, MemoryKind::device, gpu.device),
        pinned_a_(devices, MemoryKind::pinned, gpu.device),
        pinned_b_(devices, MemoryKind::pinned, gpu.device),
        pageable_(devices, MemoryKind::pageable, gpu.device),
        local_ranks_(ranks_on_my_host()),
        host_root_(std::move(host_root)),
        stream_(devices.make_stream(gpu.device)),
        side_(devices.make_stream(gpu.device)) {}

  // Buffers depend on the op: allocate() sizes them per measurement.
  void reserve(std::uint64_t, std::uint64_t) override {}

  Support allocate(const OpSpec& spec) override {
    if (is_pair_op(spec.op)) {
      if (comm_.rank() != spec.peer_a) return Support::yes();  // only the copying rank needs memory
      const Support peer = check_peer(spec);
      if (!peer.ok) return peer;
    }
    // Buffers used to only grow: an 8 GiB bidirectional sweep kept its
    // second pinned buffer through every op after it (issue 34, defect 6).
    release_all_but(buffers_for(spec.op));
    if (const Support room = host_room(spec); !room.ok) return room;
    std::string error;
    for (Buffer* b : buffers_for(spec.op))
      if (error.empty()) error = b->grow(spec.layout.bytes);
    if (error.empty()) return Support::yes();
    for (Buffer* b : buffers_for(spec.op)) b->release();
    return Support::no(fmt::format("{} {} does not fit: {}", fb::name(spec.op), format_bytes(spec.layout.bytes),
                                   error));
  }

  std::unique_ptr<PreparedOp> prepare(const OpSpec& spec) override {
    CopyContext c;
    c.devices = &devices_;
    c.stream = stream_.get();
    c.side_stream = side_.get();
    c.device = gpu_.device;
    c.sm_count = gpu_.sm_count;
    c.rank = comm_.rank();
    c.nranks = comm_.size();
    c.graph = graph_;
    if (is_pair_op(spec.op) && c.rank == spec.peer_a) {
      c.peer_device = peer_device_;  // the peer's GPU as this process numbers it (check_peer)
      set_peer_access(c.peer_device, spec.op == Op::copy_peer);
    }
    c.legs = legs_for(spec.op, c.peer_device);
    path_ = path_of(spec.op, c.peer_device);
    pair_a_ = is_pair_op(spec.op) ? spec.peer_a : -1;
    return std::make_unique<CopyOp>(std::move(c), spec);
  }

  // A pair's row is the copying rank's: the other ranks ran nothing, and
  // rank 0's own label read "GPU0->GPU-1" (issue 34, defect 3).
  std::string path() const override { return pair_a_ >= 0 ? comm_.bcast_string_quiet(path_, pair_a_) : path_; }

 private:
  // On the copying rank: the peer's GPU, told by its PCI bus id and found
  // among this process's visible devices.
  Support check_peer(const OpSpec& spec) {
    const RankGpu& a = gpus_[static_cast<std::size_t>(spec.peer_a)];
    const RankGpu& b = gpus_[static_cast<std::size_t>(spec.peer_b)];
    if (auto why = gpu::peer_copy_refusal(a, b, spec.peer_a, spec.peer_b, fb::name(spec.op)); !why.empty())
      return Support::no(why);
    const int peer = devices_.by_bus_id(b.bus_id);
    if (peer < 0) {
      return Support::no(fmt::format("rank {}'s GPU ({}) is not visible to rank {} (CUDA_VISIBLE_DEVICES, or one GPU "
                                     "per rank as Slurm's --gpus-per-task=1 gives): a peer copy needs both GPUs "
                                     "visible to the copying rank",
                                     spec.peer_b, b.bus_id, spec.peer_a));
    }
    if (!devices_.can_access_peer(gpu_.device, peer) && spec.op == Op::copy_peer)
      return Support::no(fmt::format("GPU {} cannot access GPU {} ({}) as a peer (no P2P path between them); "
                                     "copy_peer_staged measures the copy without peer access",
                                     gpu_.device, peer, b.bus_id));
    peer_device_ = peer;
    if (peer_.device() != peer || !peer_.data()) peer_ = Buffer(devices_, MemoryKind::device, peer);
    return Support::yes();
  }

  // Peer access is a property of the device pair, on or off for both ops in turn.
  void set_peer_access(int peer, bool on) { devices_.set_peer_access(gpu_.device, peer, on); }

  void release_all_but(const std::vector<Buffer*>& keep) {
    for (Buffer* b : {&dev_a_, &dev_b_, &pinned_a_, &pinned_b_, &pageable_, &peer_})
      if (std::find(keep.begin(), keep.end(), b) == keep.end()) b->release();
  }

  // Pinned and pageable buffers come out of the node's host memory, which
  // every local rank draws on at once: a size they would not fit in is
  // skipped, as mpi's sweep is refused, instead of a rank being OOM-killed
  // under a cgroup limit (issue 34, defect 6).
  Support host_room(const OpSpec& spec) {
    std::uint64_t more = 0;  // grow() frees a buffer before taking the larger size
    for (const Buffer* b : buffers_for(spec.op))
      if (b->kind() != MemoryKind::device && b->bytes() < spec.layout.bytes) more += spec.layout.bytes - b->bytes();
    if (more == 0) return Support::yes();
    const auto available = available_host_memory(host_root_);
    if (!available) return Support::yes();  // cannot tell: let the allocation decide
    const auto ranks = static_cast<std::uint64_t>(local_ranks_);
    const std::uint64_t need = more > UINT64_MAX / ranks ? UINT64_MAX : more * ranks;
    if (fits_host_memory(need, *available)) return Support::yes();
    return Support::no(fmt::format("{} {} needs {} more host memory per rank ({} for the {} ranks of this node) but "
                                   "this node has {} available ({}); lower --maxbytes",
                                   fb::name(spec.op), format_bytes(spec.layout.bytes), format_bytes(more),
                                   format_bytes(need), local_ranks_, format_bytes(available->bytes),
                                   available->source));
  }

  // This group's ranks on this rank's host (each takes host buffers of its own).
  int ranks_on_my_host() const {
    const std::string& mine = gpus_[static_cast<std::size_t>(comm_.rank())].host;
    return static_cast<int>(std::count_if(gpus_.begin(), gpus_.end(), [&](const RankGpu& r) { return r.host == mine; }));
  }

  std::vector<Buffer*> buffers_for(Op op) {
    switch (copy_path(op)) {
      case CopyPath::d2d_ce:
      case CopyPath::d2d_sm:
        return {&dev_a_, &dev_b_};
      case CopyPath::h2d_pinned:
      case CopyPath::d2h_pinned:
        return {&pinned_a_, &dev_a_};
      case CopyPath::h2d_pageable:
      case CopyPath::d2h_pageable:
        return {&pageable_, &dev_a_};
      case CopyPath::bidir_pinned:
        return {&pinned_a_, &pinned_b_, &dev_a_, &dev_b_};
      case CopyPath::peer:
      case CopyPath::peer_staged:
        return {&dev_a_, &peer_};
      case CopyPath::kernel_launch:
      case CopyPath::none:
        return {};
    }
    return {};
  }

  std::vector<CopyLeg> legs_for(Op op, int peer_device) {
    const int d = gpu_.device;
    switch (copy_path(op)) {
      case CopyPath::d2d_ce:
      case CopyPath::d2d_sm:
        return {{dev_a_.data(), dev_b_.data(), false, false, d}};
      case CopyPath::h2d_pinned:
        return {{pinned_a_.data(), dev_a_.data(), false, false, d}};
      case CopyPath::d2h_pinned:
        return {{dev_a_.data(), pinned_a_.data(), false, false, d}};
      case CopyPath::h2d_pageable:
        return {{pageable_.data(), dev_a_.data(), true, false, d}};
      case CopyPath::d2h_pageable:
        return {{dev_a_.data(), pageable_.data(), false, true, d}};
      case CopyPath::bidir_pinned:
        return {{pinned_a_.data(), dev_a_.data(), false, false, d}, {dev_b_.data(), pinned_b_.data(), false, false, d}};
      case CopyPath::peer:
      case CopyPath::peer_staged:
        if (peer_device < 0) return {};  // the receiving rank of the pair does nothing
        return {{dev_a_.data(), peer_.data(), false, false, peer_device}};
      case CopyPath::kernel_launch:
      case CopyPath::none:
        return {};
    }
    return {};
  }

  std::string path_of(Op op, int peer_device) const {
    switch (copy_path(op)) {
      case CopyPath::d2d_ce:
      case CopyPath::d2d_sm:
        return fmt::format("GPU{} memory", gpu_.device);
      case CopyPath::h2d_pinned:
      case CopyPath::d2h_pinned:
      case CopyPath::bidir_pinned:
        return fmt::format("host pinned<->GPU{}", gpu_.device);
      case CopyPath::h2d_pageable:
      case CopyPath::d2h_pageable:
        return fmt::format("host pageable<->GPU{}", gpu_.device);
      case CopyPath::peer:
        return fmt::format("GPU{}->GPU{} peer access", gpu_.device, peer_device);
      case CopyPath::peer_staged:
        return fmt::format("GPU{}->GPU{} staged", gpu_.device, peer_device);
      case CopyPath::kernel_launch:
      case CopyPath::none:
        break;
    }
    return fmt::format("GPU{} launch", gpu_.device);
  }

  gpu::Devices& devices_;
  Comm comm_;
  GpuPlacement gpu_;
  bool graph_;
  std::vector<RankGpu> gpus_;
  Buffer dev_a_, dev_b_, pinned_a_, pinned_b_, pageable_;
  Buffer peer_;
  int peer_device_ = -1;  // the copying rank's index of its peer's GPU
  int local_ranks_;
  std::string host_root_;  // where host memory is read (available_host_memory)
  // After the buffers: a stream may hold work on them until it is destroyed.
  std::unique_ptr<gpu::DeviceStream> stream_;
  std::unique_ptr<gpu::DeviceStream> side_;
  std::string path_;
  int pair_a_ = -1;  // the copying rank of the last pair op prepared; -1: not a pair op
};

class CudaCopyBackend final : public gpu::GpuBackend {
 public:
  CudaCopyBackend(gpu::Devices& devices, std::string host_root)
      : GpuBackend(devices), host_root_(std::move(host_root)) {}
  std::string_view name() const override { return "cuda"; }
  std::string version() const override { return devices_.version(); }

  OpSet ops() const override { return kCudaCopyOps; }
  std::string_view elsewhere() const override {
    return "the cuda backend measures copy paths and kernel launches; communication ops run on --backend nccl";
  }

  Support supports(const OpSpec& spec) const override {
    if (spec.in_place) return Support::no("copy paths have no in-place variant");
    if (spec.op == Op::kernel_launch && spec.layout.bytes > 8)
      return Support::no("kernel_launch has no message size: it runs at sizes up to 8 B only (include -b 8)");
    if (graph_ && is_pageable_copy(spec.op))
      return Support::no(fmt::format("{}: copies from or to pageable memory cannot be captured in a CUDA graph; "
                                     "run them without --graph",
                                     fb::name(spec.op)));
    return Support::yes();
  }

  std::unique_ptr<BackendGroup> open(const Comm& comm) override {
    return std::make_unique<CopyGroup>(devices_, comm, gpu_, graph_, host_root_);
  }

 private:
  std::string host_root_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_copy_backend(gpu::Devices& devices, const std::string& host_root) {
  return std::make_unique<CudaCopyBackend>(devices, host_root);
}

}  // namespace fb

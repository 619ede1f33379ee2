// One NCCL operation on device buffers: every collective of the sweep,
// gather and scatter, sendrecv (ring), and the point-to-point ops through
// ncclSend/ncclRecv.
// Timed on the communication stream with events (or a CUDA graph), checked
// by device kernels. Plain C++ over the device layer and nccl::Collectives.
#pragma once

#include "collectives.hpp"
#include "cuda_common/devices.hpp"
#include "cuda_common/stream_timer.hpp"
#include "fabricbench/backends/corruptible.hpp"
#include "fabricbench/core/backend.hpp"
#include "nccl_comm.hpp"

namespace fb {

// The NCCL calls behind each op, `none` where the nccl backend has no code.
// One exhaustive switch: a new op stops the build here until it is given a
// call (or none); the backend's op list (kNcclOps) and NcclOp::enqueue both
// read it, so the ops it declares are exactly the ops it queues work for.
enum class NcclCall {
  none, all_reduce, all_gather, reduce_scatter, broadcast, reduce, gather, scatter,
  alltoall, ring_sendrecv, window, pingpong,  // ncclSend/ncclRecv
};

constexpr NcclCall nccl_call(Op op) {
  switch (op) {
    case Op::all_reduce: return NcclCall::all_reduce;
    case Op::all_gather: return NcclCall::all_gather;
    case Op::reduce_scatter: return NcclCall::reduce_scatter;
    case Op::broadcast: return NcclCall::broadcast;
    case Op::reduce: return NcclCall::reduce;
    case Op::gather: return NcclCall::gather;
    case Op::scatter: return NcclCall::scatter;
    case Op::alltoall: return NcclCall::alltoall;
    case Op::sendrecv: return NcclCall::ring_sendrecv;
    case Op::unidir:
    case Op::bidir: return NcclCall::window;
    case Op::pingpong: return NcclCall::pingpong;
    case Op::copy_d2d_ce:
    case Op::copy_d2d_sm:
    case Op::copy_h2d_pinned:
    case Op::copy_d2h_pinned:
    case Op::copy_h2d_pageable:
    case Op::copy_d2h_pageable:
    case Op::copy_bidir_pinned:
    case Op::copy_peer:
    case Op::copy_peer_staged:
    case Op::kernel_launch: return NcclCall::none;
  }
  return NcclCall::none;
}

inline constexpr OpSet kNcclOps = OpSet::where([](Op op) { return nccl_call(op) != NcclCall::none; });

struct NcclOpContext {
  NcclComm* comm = nullptr;  // the group's; every wait on it polls (an abort ends it)
  gpu::Devices* devices = nullptr;
  gpu::DeviceStream* stream = nullptr;
  int device = 0;
  int rank = 0;
  int nranks = 1;
  bool graph = false;
  void* in = nullptr;   // input buffer (out-of-place)
  void* out = nullptr;  // output buffer; holds the input too when in-place
};

class NcclOp final : public PreparedOp, public CorruptibleOutput {
 public:
  NcclOp(const NcclOpContext& context, const OpSpec& spec);
  ~NcclOp() override;
  NcclOp(const NcclOp&) = delete;
  NcclOp& operator=(const NcclOp&) = delete;

  void run() override;
  void run_timed(IterationTimes times) override;
  // Queued on the communication stream; finished() asks its event (and NCCL
  // for an asynchronous error, so a lost peer ends the wait with its reason).
  void start() override;
  bool finished() override;
  void fill_check() override;
  std::uint64_t count_wrong() override;
  bool participates() const override { return !is_pair_op(spec_.op) || peer_ >= 0; }
  bool connects_lazily() const override { return true; }  // NCCL_RUNTIME_CONNECT=1 is NCCL 2.22+'s default
  double ops_per_iteration() const override { return fb::ops_per_iteration(spec_); }
  void corrupt_output_element(std::uint64_t index) override;

 private:
  void enqueue();
  void alltoall();
  void ring_sendrecv();
  void window();
  void pingpong();
  // NCCL before 2.28 has no ncclGather/ncclScatter: sends and receives in one
  // group, as nccl-tests builds them there (gather.cu, scatter.cu).
  void grouped_gather();
  void grouped_scatter();
  char* at_block(void* base, int block) const;
  // One call of count_ elements of the op's datatype from `send` to `recv`;
  // `root` is the root or the peer.
  nccl::Collectives::Call call(const void* send, void* recv, int root = 0) const;
  void check(const nccl::Status& status, const char* call) const;

  NcclOpContext c_;
  nccl::Collectives& lib_;
  nccl::CommHandle comm_;  // c_.comm, initialised
  OpSpec spec_;
  std::size_t word_;
  std::size_t count_;  // elements per call (the per-rank block)
  int peer_ = -1;
  void* send_ = nullptr;    // where the op reads its input
  void* result_ = nullptr;  // where its result lands
  gpu::StreamTimer timer_;
};

}  // namespace fb

// One copy path of the cuda backend, timed on the rank's stream: device-local
// (copy engine or SM kernel), host<->device (pinned, pageable, both ways at
// once), peer copies to another GPU, or an empty kernel launch. Each leg
// copies `bytes` from `src` to `dst`; the check fills the source with the
// rank's pattern and compares the destination on the device. Plain C++: every
// device call goes through the device layer (cuda_common/devices.hpp).
#pragma once

#include <vector>

#include "cuda_common/devices.hpp"
#include "cuda_common/stream_timer.hpp"
#include "fabricbench/backends/corruptible.hpp"
#include "fabricbench/core/backend.hpp"

namespace fb {

// The copy behind each op, `none` for the communication ops (the cuda backend
// has no code for them). One exhaustive switch: a new op stops the build here
// until it is given a path (or none); the backend's op list (kCudaCopyOps) and
// every switch of the backend read it.
enum class CopyPath {
  none, d2d_ce, d2d_sm, h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable, bidir_pinned, peer, peer_staged,
  kernel_launch,
};

constexpr CopyPath copy_path(Op op) {
  switch (op) {
    case Op::copy_d2d_ce: return CopyPath::d2d_ce;
    case Op::copy_d2d_sm: return CopyPath::d2d_sm;
    case Op::copy_h2d_pinned: return CopyPath::h2d_pinned;
    case Op::copy_d2h_pinned: return CopyPath::d2h_pinned;
    case Op::copy_h2d_pageable: return CopyPath::h2d_pageable;
    case Op::copy_d2h_pageable: return CopyPath::d2h_pageable;
    case Op::copy_bidir_pinned: return CopyPath::bidir_pinned;
    case Op::copy_peer: return CopyPath::peer;
    case Op::copy_peer_staged: return CopyPath::peer_staged;
    case Op::kernel_launch: return CopyPath::kernel_launch;
    case Op::all_reduce:
    case Op::all_gather:
    case Op::reduce_scatter:
    case Op::broadcast:
    case Op::reduce:
    case Op::alltoall:
    case Op::gather:
    case Op::scatter:
    case Op::sendrecv:
    case Op::pingpong:
    case Op::unidir:
    case Op::bidir: return CopyPath::none;
  }
  return CopyPath::none;
}

inline constexpr OpSet kCudaCopyOps = OpSet::where([](Op op) { return copy_path(op) != CopyPath::none; });

struct CopyLeg {
  void* src = nullptr;
  void* dst = nullptr;
  bool src_pageable = false;
  bool dst_pageable = false;
  int dst_device = 0;  // the GPU that owns (or reaches) dst, for the check kernel
};

struct CopyContext {
  gpu::Devices* devices = nullptr;
  gpu::DeviceStream* stream = nullptr;
  gpu::DeviceStream* side_stream = nullptr;  // the second direction of copy_bidir_pinned
  int device = 0;
  int peer_device = -1;
  int sm_count = 0;
  int rank = 0;
  int nranks = 1;
  bool graph = false;
  std::vector<CopyLeg> legs;  // copy_bidir_pinned has two, kernel_launch none
};

class CopyOp final : public PreparedOp, public CorruptibleOutput {
 public:
  CopyOp(CopyContext context, const OpSpec& spec);

  void run() override;
  void run_timed(IterationTimes times) override;
  void fill_check() override;
  std::uint64_t count_wrong() override;
  bool participates() const override { return !is_pair_op(spec_.op) || c_.rank == spec_.peer_a; }
  void corrupt_output_element(std::uint64_t index) override;

 private:
  void enqueue();
  void fill_leg(const CheckContext& ctx, const CopyLeg& leg);
  std::uint64_t verify_leg(const CheckContext& ctx, const CopyLeg& leg);

  CopyContext c_;
  OpSpec spec_;
  std::size_t bytes_;
  gpu::StreamTimer timer_;
};

// Copies from and to pageable memory return only when the driver has staged
// them, so they are timed by the wall clock and cannot be graph-captured.
bool is_pageable_copy(Op op);

}  // namespace fb

#include "copy_op.hpp"

#include <cstring>
#include <stdexcept>

#include "cuda_common/copy_kernels.hpp"
#include "cuda_common/cuda_queue.hpp"
#include "cuda_common/device_check.hpp"
#include "cuda_common/gpu_error.hpp"
#include "cuda_common/gpu_memory.hpp"

namespace fb {

bool is_pageable_copy(Op op) { return op == Op::copy_h2d_pageable || op == Op::copy_d2h_pageable; }

CopyOp::CopyOp(CopyContext context, const OpSpec& spec)
    : c_(std::move(context)),
      spec_(spec),
      bytes_(spec.layout.bytes),
      timer_(std::make_unique<gpu::CudaQueue>(c_.stream, c_.device)) {}

void CopyOp::copy(const CopyLeg& leg, cudaMemcpyKind kind, cudaStream_t stream) {
  gpu::check(cudaMemcpyAsync(leg.dst, leg.src, bytes_, kind, stream), "cudaMemcpyAsync", c_.device);
}

void CopyOp::enqueue() {
  switch (copy_path(spec_.op)) {
    case CopyPath::d2d_ce:
      return copy(c_.legs[0], cudaMemcpyDeviceToDevice, c_.stream);
    case CopyPath::d2d_sm:
      return gpu::sm_copy(c_.legs[0].dst, c_.legs[0].src, bytes_, c_.sm_count, c_.stream, c_.device);
    case CopyPath::h2d_pinned:
    case CopyPath::h2d_pageable:
      return copy(c_.legs[0], cudaMemcpyHostToDevice, c_.stream);
    case CopyPath::d2h_pinned:
    case CopyPath::d2h_pageable:
      return copy(c_.legs[0], cudaMemcpyDeviceToHost, c_.stream);
    case CopyPath::bidir_pinned:
      // Fork the second direction onto the side stream and join it back, so
      // the iteration ends when both directions have.
      gpu::check(cudaEventRecord(c_.fork, c_.stream), "cudaEventRecord", c_.device);
      gpu::check(cudaStreamWaitEvent(c_.side_stream, c_.fork, 0), "cudaStreamWaitEvent", c_.device);
      copy(c_.legs[0], cudaMemcpyHostToDevice, c_.stream);
      copy(c_.legs[1], cudaMemcpyDeviceToHost, c_.side_stream);
      gpu::check(cudaEventRecord(c_.join, c_.side_stream), "cudaEventRecord", c_.device);
      gpu::check(cudaStreamWaitEvent(c_.stream, c_.join, 0), "cudaStreamWaitEvent", c_.device);
      return;
    case CopyPath::peer:
    case CopyPath::peer_staged:
      return gpu::check(cudaMemcpyPeerAsync(c_.legs[0].dst, c_.peer_device, c_.legs[0].src, c_.device, bytes_,
                                            c_.stream),
                        "cudaMemcpyPeerAsync", c_.device);
    case CopyPath::kernel_launch:
      return gpu::launch_empty_kernel(c_.stream, c_.device);
    case CopyPath::none:
      break;
  }
  throw std::logic_error("CopyOp::enqueue: not a copy path");  // refused by the engine before prepare
}

void CopyOp::run() {
  enqueue();
  gpu::check(cudaStreamSynchronize(c_.stream), "cudaStreamSynchronize", c_.device);
}

void CopyOp::run_timed(IterationTimes times) {
  if (is_pageable_copy(spec_.op)) {
    PreparedOp::run_timed(times);
  } else if (c_.graph) {
    timer_.time_graph(times, [this] { enqueue(); });
  } else {
    timer_.time_queued(times, [this] { enqueue(); });
  }
}

// A pageable source gets its pattern through the device destination; a
// pageable destination is poisoned on the host.
void CopyOp::fill_leg(const CheckContext& ctx, const CopyLeg& leg) {
  if (leg.src_pageable) {
    gpu::fill_input(ctx, leg.dst, c_.stream, c_.device);
    gpu::check(cudaStreamSynchronize(c_.stream), "cudaStreamSynchronize", c_.device);
    gpu::check(cudaMemcpy(leg.src, leg.dst, bytes_, cudaMemcpyDefault), "cudaMemcpy", c_.device);
  } else {
    gpu::fill_input(ctx, leg.src, c_.stream, c_.device);
  }
  if (leg.dst_pageable) {
    gpu::check(cudaStreamSynchronize(c_.stream), "cudaStreamSynchronize", c_.device);
    std::memset(leg.dst, pattern::kPoisonByte, bytes_);
  } else {
    gpu::DeviceGuard on(leg.dst_device);
    gpu::poison(leg.dst, bytes_, nullptr, leg.dst_device);
    gpu::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", leg.dst_device);
  }
  gpu::check(cudaStreamSynchronize(c_.stream), "cudaStreamSynchronize", c_.device);
}

// A pageable destination is brought back onto the device (over the source,
// no longer needed) and compared there.
std::uint64_t CopyOp::verify_leg(const CheckContext& ctx, const CopyLeg& leg) {
  if (leg.dst_pageable) {
    gpu::check(cudaMemcpy(leg.src, leg.dst, bytes_, cudaMemcpyDefault), "cudaMemcpy", c_.device);
    return gpu::count_wrong(ctx, leg.src, c_.stream, c_.device);
  }
  gpu::DeviceGuard on(leg.dst_device);
  return gpu::count_wrong(ctx, leg.dst, nullptr, leg.dst_device);
}

void CopyOp::fill_check() {
  const CheckContext ctx = check_context(spec_, c_.rank, c_.nranks);
  for (const CopyLeg& leg : c_.legs) fill_leg(ctx, leg);
}

std::uint64_t CopyOp::count_wrong() {
  const CheckContext ctx = check_context(spec_, c_.rank, c_.nranks);
  std::uint64_t wrong = 0;
  for (const CopyLeg& leg : c_.legs) wrong += verify_leg(ctx, leg);
  return wrong;
}

void CopyOp::corrupt_output_element(std::uint64_t index) {
  if (!c_.legs.empty() && index < spec_.layout.count)
    gpu::corrupt_element(spec_.dtype, c_.legs[0].dst, index, c_.device);
}

}  // namespace fb

#include "copy_op.hpp"

#include <cstring>
#include <stdexcept>

#include "fabricbench/core/pattern.hpp"

namespace fb {

bool is_pageable_copy(Op op) { return op == Op::copy_h2d_pageable || op == Op::copy_d2h_pageable; }

CopyOp::CopyOp(CopyContext context, const OpSpec& spec)
    : c_(std::move(context)), spec_(spec), bytes_(spec.layout.bytes), timer_(c_.stream->timing_queue()) {}

void CopyOp::enqueue() {
  using gpu::CopyKind;
  gpu::DeviceStream& stream = *c_.stream;
  const CopyLeg* leg = c_.legs.empty() ? nullptr : &c_.legs[0];
  switch (copy_path(spec_.op)) {
    case CopyPath::d2d_ce:
      return stream.copy(leg->dst, leg->src, bytes_, CopyKind::device_to_device);
    case CopyPath::d2d_sm:
      return stream.sm_copy(leg->dst, leg->src, bytes_, c_.sm_count);
    case CopyPath::h2d_pinned:
    case CopyPath::h2d_pageable:
      return stream.copy(leg->dst, leg->src, bytes_, CopyKind::host_to_device);
    case CopyPath::d2h_pinned:
    case CopyPath::d2h_pageable:
      return stream.copy(leg->dst, leg->src, bytes_, CopyKind::device_to_host);
    case CopyPath::bidir_pinned:
      // Fork the second direction onto the side stream and join it back, so
      // the iteration ends when both directions have.
      c_.side_stream->wait_for(stream);
      stream.copy(leg->dst, leg->src, bytes_, CopyKind::host_to_device);
      c_.side_stream->copy(c_.legs[1].dst, c_.legs[1].src, bytes_, CopyKind::device_to_host);
      stream.wait_for(*c_.side_stream);
      return;
    case CopyPath::peer:
    case CopyPath::peer_staged:
      return stream.copy_peer(leg->dst, c_.peer_device, leg->src, bytes_);
    case CopyPath::kernel_launch:
      return stream.launch_empty_kernel();
    case CopyPath::none:
      break;
  }
  throw std::logic_error("CopyOp::enqueue: not a copy path");  // refused by the engine before prepare
}

void CopyOp::run() {
  enqueue();
  c_.stream->synchronize();
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
// pageable destination is poisoned on the host. Each step is complete when
// it returns (the device layer's check calls are).
void CopyOp::fill_leg(const CheckContext& ctx, const CopyLeg& leg) {
  gpu::Devices& devices = *c_.devices;
  if (leg.src_pageable) {
    devices.fill_input(c_.device, ctx, leg.dst);
    devices.copy_now(leg.src, leg.dst, bytes_, c_.device);
  } else {
    devices.fill_input(c_.device, ctx, leg.src);
  }
  if (leg.dst_pageable)
    std::memset(leg.dst, pattern::kPoisonByte, bytes_);
  else
    devices.poison(leg.dst_device, leg.dst, bytes_);
}

// A pageable destination is brought back onto the device (over the source,
// no longer needed) and compared there.
std::uint64_t CopyOp::verify_leg(const CheckContext& ctx, const CopyLeg& leg) {
  if (leg.dst_pageable) {
    c_.devices->copy_now(leg.src, leg.dst, bytes_, c_.device);
    return c_.devices->count_wrong(c_.device, ctx, leg.src);
  }
  return c_.devices->count_wrong(leg.dst_device, ctx, leg.dst);
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
    c_.devices->corrupt_element(c_.legs[0].dst_device, spec_.dtype, c_.legs[0].dst, index);
}

}  // namespace fb

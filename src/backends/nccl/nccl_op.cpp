#include "nccl_op.hpp"

#include <stdexcept>
#include <string>

#include "fabricbench/core/host_check.hpp"

namespace fb {

NcclOp::NcclOp(const NcclOpContext& context, const OpSpec& spec)
    : c_(context),
      lib_(context.comm->lib()),
      comm_(context.comm->ready()),
      spec_(spec),
      word_(dtype_bytes(spec.dtype)),
      count_(spec.layout.block),
      peer_(pair_peer(spec, context.rank)),
      timer_(context.stream->timing_queue([comm = context.comm] { comm->poll(); })) {
  if (nccl_call(spec.op) == NcclCall::none)  // the engine refuses it first (backend_runs)
    throw std::logic_error(std::string("NcclOp: not an op of the nccl backend: ") + std::string(name(spec.op)));
  // An abort frees the graph first: ncclCommAbort waits for graph execs that captured the communicator.
  c_.comm->on_abort([this] { timer_.drop_graph(); });
  // NCCL's in-place conventions (nccl.h): all_gather and gather read the
  // rank's block from the output at its offset (in-place at gather's root:
  // sendbuff == recvbuff + root*count), reduce_scatter and scatter write it
  // there (scatter's root: recvbuff == sendbuff + root*count). nccl-tests
  // places them the same way (sendInplaceOffset, recvInplaceOffset).
  send_ = spec.in_place ? c_.out : c_.in;
  result_ = c_.out;
  if (spec.in_place && (spec.op == Op::all_gather || spec.op == Op::gather)) send_ = at_block(c_.out, c_.rank);
  if (spec.in_place && (spec.op == Op::reduce_scatter || spec.op == Op::scatter)) result_ = at_block(c_.out, c_.rank);
}

NcclOp::~NcclOp() { c_.comm->on_abort({}); }

char* NcclOp::at_block(void* base, int block) const {
  return static_cast<char*>(base) + static_cast<std::size_t>(block) * count_ * word_;
}

nccl::Collectives::Call NcclOp::call(const void* send, void* recv, int root) const {
  return {send, recv, count_, spec_.dtype, spec_.redop, root};
}

void NcclOp::check(const nccl::Status& status, const char* name) const { c_.comm->check(status, name); }

// alltoall, sendrecv (ring) and the bandwidth ops: sends and receives fused in one group.
void NcclOp::alltoall() {
  gpu::DeviceStream& s = *c_.stream;
  check(lib_.group_start(), "ncclGroupStart");
  for (int p = 0; p < c_.nranks; ++p) {
    check(lib_.send(call(at_block(send_, p), nullptr, p), comm_, s), "ncclSend");
    check(lib_.recv(call(nullptr, at_block(result_, p), p), comm_, s), "ncclRecv");
  }
  check(lib_.group_end(), "ncclGroupEnd");
}

void NcclOp::ring_sendrecv() {
  gpu::DeviceStream& s = *c_.stream;
  const int next = (c_.rank + 1) % c_.nranks;
  const int prev = (c_.rank - 1 + c_.nranks) % c_.nranks;
  check(lib_.group_start(), "ncclGroupStart");
  check(lib_.send(call(send_, nullptr, next), comm_, s), "ncclSend");
  check(lib_.recv(call(nullptr, result_, prev), comm_, s), "ncclRecv");
  check(lib_.group_end(), "ncclGroupEnd");
}

void NcclOp::window() {
  gpu::DeviceStream& s = *c_.stream;
  const bool is_a = c_.rank == spec_.peer_a;
  const bool sends = spec_.op == Op::bidir || is_a;
  const bool receives = spec_.op == Op::bidir || !is_a;
  check(lib_.group_start(), "ncclGroupStart");
  for (int w = 0; w < spec_.window; ++w) {
    if (sends) check(lib_.send(call(send_, nullptr, peer_), comm_, s), "ncclSend");
    if (receives) check(lib_.recv(call(nullptr, result_, peer_), comm_, s), "ncclRecv");
  }
  check(lib_.group_end(), "ncclGroupEnd");
}

// A round trip: peer a sends then receives, peer b receives then sends.
void NcclOp::pingpong() {
  gpu::DeviceStream& s = *c_.stream;
  const bool is_a = c_.rank == spec_.peer_a;
  for (int leg = 0; leg < 2; ++leg) {
    if ((leg == 0) == is_a) {
      check(lib_.send(call(send_, nullptr, peer_), comm_, s), "ncclSend");
    } else {
      check(lib_.recv(call(nullptr, result_, peer_), comm_, s), "ncclRecv");
    }
  }
}

// NCCL before 2.28 has no ncclGather/ncclScatter: sends and receives in one
// group, as nccl-tests builds them there (gather.cu, scatter.cu).
void NcclOp::grouped_gather() {
  gpu::DeviceStream& s = *c_.stream;
  check(lib_.group_start(), "ncclGroupStart");
  check(lib_.send(call(send_, nullptr, spec_.root), comm_, s), "ncclSend");
  if (c_.rank == spec_.root)
    for (int p = 0; p < c_.nranks; ++p) check(lib_.recv(call(nullptr, at_block(result_, p), p), comm_, s), "ncclRecv");
  check(lib_.group_end(), "ncclGroupEnd");
}

void NcclOp::grouped_scatter() {
  gpu::DeviceStream& s = *c_.stream;
  check(lib_.group_start(), "ncclGroupStart");
  if (c_.rank == spec_.root)
    for (int p = 0; p < c_.nranks; ++p) check(lib_.send(call(at_block(send_, p), nullptr, p), comm_, s), "ncclSend");
  check(lib_.recv(call(nullptr, result_, spec_.root), comm_, s), "ncclRecv");
  check(lib_.group_end(), "ncclGroupEnd");
}

// Every case queues work on the stream: an op with no call cannot reach here
// (the constructor refuses it), so no iteration is ever timed empty.
void NcclOp::enqueue() {
  gpu::DeviceStream& s = *c_.stream;
  const auto c = call(send_, result_, spec_.root);
  switch (nccl_call(spec_.op)) {
    case NcclCall::all_reduce:
      return check(lib_.all_reduce(c, comm_, s), "ncclAllReduce");
    case NcclCall::all_gather:
      return check(lib_.all_gather(c, comm_, s), "ncclAllGather");
    case NcclCall::reduce_scatter:
      return check(lib_.reduce_scatter(c, comm_, s), "ncclReduceScatter");
    case NcclCall::broadcast:
      return check(lib_.broadcast(c, comm_, s), "ncclBroadcast");
    case NcclCall::reduce:
      return check(lib_.reduce(c, comm_, s), "ncclReduce");
    case NcclCall::gather:
      if (!lib_.has_gather()) return grouped_gather();
      return check(lib_.gather(c, comm_, s), "ncclGather");
    case NcclCall::scatter:
      if (!lib_.has_gather()) return grouped_scatter();
      return check(lib_.scatter(c, comm_, s), "ncclScatter");
    case NcclCall::alltoall:
      return alltoall();
    case NcclCall::ring_sendrecv:
      return ring_sendrecv();
    case NcclCall::window:
      return window();
    case NcclCall::pingpong:
      return pingpong();
    case NcclCall::none:
      break;
  }
  throw std::logic_error("NcclOp::enqueue: an op without an NCCL call");
}

void NcclOp::run() {
  enqueue();
  c_.comm->wait(*c_.stream);
}

void NcclOp::start() {
  enqueue();
  c_.stream->mark();
}

bool NcclOp::finished() {
  if (c_.stream->mark_passed()) return true;
  c_.comm->poll();  // a lost peer's error, or an abort, ends the wait
  return false;
}

void NcclOp::run_timed(IterationTimes times) {
  if (c_.graph) {
    timer_.time_graph(times, [this] { enqueue(); });
  } else {
    timer_.time_queued(times, [this] { enqueue(); });
  }
}

void NcclOp::fill_check() {
  const CheckContext ctx = check_context(spec_, c_.rank, c_.nranks);
  // Poison first: in-place inputs share the output buffer and must survive.
  c_.devices->poison(c_.device, result_, spec_.layout.out_elems * word_);
  c_.devices->fill_input(c_.device, ctx, send_);
}

std::uint64_t NcclOp::count_wrong() {
  const CheckContext ctx = check_context(spec_, c_.rank, c_.nranks);
  if (!has_checked_output(ctx)) return 0;
  return c_.devices->count_wrong(c_.device, ctx, result_);
}

void NcclOp::corrupt_output_element(std::uint64_t index) {
  if (index < spec_.layout.out_elems) c_.devices->corrupt_element(c_.device, spec_.dtype, result_, index);
}

}  // namespace fb

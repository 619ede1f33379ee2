#include "nccl_op.hpp"

#include <stdexcept>
#include <string>

#include "cuda_common/cuda_queue.hpp"
#include "cuda_common/device_check.hpp"
#include "cuda_common/gpu_error.hpp"
#include "fabricbench/core/host_check.hpp"
#include "nccl_types.hpp"

namespace fb {

NcclOp::NcclOp(const NcclOpContext& context, const OpSpec& spec)
    : c_(context),
      comm_(context.comm->ready()),
      spec_(spec),
      type_(*nccl::datatype(spec.dtype)),
      word_(dtype_bytes(spec.dtype)),
      count_(spec.layout.block),
      peer_(pair_peer(spec, context.rank)),
      timer_(std::make_unique<gpu::CudaQueue>(context.stream, context.device,
                                              [comm = context.comm](cudaEvent_t e) { comm->wait(e, "NCCL's work"); })) {
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

NcclOp::~NcclOp() {
  c_.comm->on_abort({});
  if (done_) cudaEventDestroy(done_);
}

char* NcclOp::at_block(void* base, int block) const {
  return static_cast<char*>(base) + static_cast<std::size_t>(block) * count_ * word_;
}

void NcclOp::check(ncclResult_t rc, const char* call) const { c_.comm->check(rc, call); }

void NcclOp::wait_for_stream(const char* what) {
  if (!done_) gpu::check(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), "cudaEventCreateWithFlags", c_.device);
  gpu::check(cudaEventRecord(done_, c_.stream), "cudaEventRecord", c_.device);
  c_.comm->wait(done_, what);
}

// alltoall, sendrecv (ring) and the bandwidth ops: sends and receives fused in one group.
void NcclOp::alltoall() {
  check(ncclGroupStart(), "ncclGroupStart");
  for (int p = 0; p < c_.nranks; ++p) {
    check(ncclSend(at_block(send_, p), count_, type_, p, comm_, c_.stream), "ncclSend");
    check(ncclRecv(at_block(result_, p), count_, type_, p, comm_, c_.stream), "ncclRecv");
  }
  check(ncclGroupEnd(), "ncclGroupEnd");
}

void NcclOp::ring_sendrecv() {
  const int next = (c_.rank + 1) % c_.nranks;
  const int prev = (c_.rank - 1 + c_.nranks) % c_.nranks;
  check(ncclGroupStart(), "ncclGroupStart");
  check(ncclSend(send_, count_, type_, next, comm_, c_.stream), "ncclSend");
  check(ncclRecv(result_, count_, type_, prev, comm_, c_.stream), "ncclRecv");
  check(ncclGroupEnd(), "ncclGroupEnd");
}

void NcclOp::window() {
  const bool is_a = c_.rank == spec_.peer_a;
  const bool sends = spec_.op == Op::bidir || is_a;
  const bool receives = spec_.op == Op::bidir || !is_a;
  check(ncclGroupStart(), "ncclGroupStart");
  for (int w = 0; w < spec_.window; ++w) {
    if (sends) check(ncclSend(send_, count_, type_, peer_, comm_, c_.stream), "ncclSend");
    if (receives) check(ncclRecv(result_, count_, type_, peer_, comm_, c_.stream), "ncclRecv");
  }
  check(ncclGroupEnd(), "ncclGroupEnd");
}

// A round trip: peer a sends then receives, peer b receives then sends.
void NcclOp::pingpong() {
  const bool is_a = c_.rank == spec_.peer_a;
  for (int leg = 0; leg < 2; ++leg) {
    if ((leg == 0) == is_a) {
      check(ncclSend(send_, count_, type_, peer_, comm_, c_.stream), "ncclSend");
    } else {
      check(ncclRecv(result_, count_, type_, peer_, comm_, c_.stream), "ncclRecv");
    }
  }
}

void NcclOp::grouped_gather() {
  check(ncclGroupStart(), "ncclGroupStart");
  check(ncclSend(send_, count_, type_, spec_.root, comm_, c_.stream), "ncclSend");
  if (c_.rank == spec_.root)
    for (int p = 0; p < c_.nranks; ++p)
      check(ncclRecv(at_block(result_, p), count_, type_, p, comm_, c_.stream), "ncclRecv");
  check(ncclGroupEnd(), "ncclGroupEnd");
}

void NcclOp::grouped_scatter() {
  check(ncclGroupStart(), "ncclGroupStart");
  if (c_.rank == spec_.root)
    for (int p = 0; p < c_.nranks; ++p)
      check(ncclSend(at_block(send_, p), count_, type_, p, comm_, c_.stream), "ncclSend");
  check(ncclRecv(result_, count_, type_, spec_.root, comm_, c_.stream), "ncclRecv");
  check(ncclGroupEnd(), "ncclGroupEnd");
}

// Every case queues work on the stream: an op with no call cannot reach here
// (the constructor refuses it), so no iteration is ever timed empty.
void NcclOp::enqueue() {
  const ncclRedOp_t red = nccl::reduction(spec_.redop);
  switch (nccl_call(spec_.op)) {
    case NcclCall::all_reduce:
      return check(ncclAllReduce(send_, result_, count_, type_, red, comm_, c_.stream), "ncclAllReduce");
    case NcclCall::all_gather:
      return check(ncclAllGather(send_, result_, count_, type_, comm_, c_.stream), "ncclAllGather");
    case NcclCall::reduce_scatter:
      return check(ncclReduceScatter(send_, result_, count_, type_, red, comm_, c_.stream), "ncclReduceScatter");
    case NcclCall::broadcast:
      return check(ncclBroadcast(send_, result_, count_, type_, spec_.root, comm_, c_.stream), "ncclBroadcast");
    case NcclCall::reduce:
      return check(ncclReduce(send_, result_, count_, type_, red, spec_.root, comm_, c_.stream), "ncclReduce");
    case NcclCall::gather:
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
      return check(ncclGather(send_, result_, count_, type_, spec_.root, comm_, c_.stream), "ncclGather");
#else
      return grouped_gather();
#endif
    case NcclCall::scatter:
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
      return check(ncclScatter(send_, result_, count_, type_, spec_.root, comm_, c_.stream), "ncclScatter");
#else
      return grouped_scatter();
#endif
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
  wait_for_stream("an NCCL iteration");
}

void NcclOp::start() {
  if (!done_) gpu::check(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), "cudaEventCreateWithFlags", c_.device);
  enqueue();
  gpu::check(cudaEventRecord(done_, c_.stream), "cudaEventRecord", c_.device);
}

bool NcclOp::finished() {
  if (!done_) return true;
  const cudaError_t rc = cudaEventQuery(done_);
  if (rc == cudaSuccess) return true;
  if (rc != cudaErrorNotReady) gpu::check(rc, "cudaEventQuery", c_.device);
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
  gpu::poison(result_, spec_.layout.out_elems * word_, c_.stream, c_.device);
  gpu::fill_input(ctx, send_, c_.stream, c_.device);
  gpu::check(cudaStreamSynchronize(c_.stream), "cudaStreamSynchronize", c_.device);
}

std::uint64_t NcclOp::count_wrong() {
  const CheckContext ctx = check_context(spec_, c_.rank, c_.nranks);
  if (!has_checked_output(ctx)) return 0;
  return gpu::count_wrong(ctx, result_, c_.stream, c_.device);
}

void NcclOp::corrupt_output_element(std::uint64_t index) {
  if (index < spec_.layout.out_elems) gpu::corrupt_element(spec_.dtype, result_, index, c_.device);
}

}  // namespace fb

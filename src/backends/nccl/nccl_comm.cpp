#include "nccl_comm.hpp"

#include <fmt/format.h>
#include <sched.h>

#include "cuda_common/gpu_error.hpp"
#include "fabricbench/core/errors.hpp"
#include "nccl_types.hpp"

namespace fb {

NcclComm::NcclComm(int nranks, const ncclUniqueId& id, int rank, int device) : device_(device) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // every call may answer ncclInProgress; we poll (see the header)
  const ncclResult_t rc = ncclCommInitRankConfig(&comm_, nranks, id, rank, &config);
  if (rc != ncclSuccess && rc != ncclInProgress) {
    if (comm_) ncclCommAbort(comm_);
    comm_ = nullptr;
    nccl::check(rc, "ncclCommInitRankConfig", nullptr, device_);
  }
}

NcclComm::NcclComm(NcclComm& parent, int color, int key) : device_(parent.device_) { split(parent, color, key); }

void NcclComm::split_out(NcclComm& parent) {
  NcclComm none(parent, NCCL_SPLIT_NOCOLOR, 0);  // gets no communicator; its destructor has nothing to free
}

void NcclComm::split(NcclComm& parent, int color, int key) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  const ncclComm_t p = parent.ready();
  const ncclResult_t rc = ncclCommSplit(p, color, key, &comm_, &config);
  // The parent carries the split's progress until every rank of it joined.
  parent.check(rc, "ncclCommSplit");
  if (color == NCCL_SPLIT_NOCOLOR) return;
  // A non-blocking split hands the new communicator over later, from NCCL's
  // own thread, into comm_ (NCCL 2.23 and later: NVIDIA/nccl#1472; seen on
  // the H200 with 2.28.3, where comm_ was still empty when the call and the
  // parent's wait had both returned). Wait for it, polling the parent for
  // errors and aborts, so nothing writes into this object after it is gone.
  while (__atomic_load_n(&comm_, __ATOMIC_ACQUIRE) == nullptr) {
    parent.wait_in_progress("ncclCommSplit");
    sched_yield();
  }
}

NcclComm::~NcclComm() {
  if (!comm_) return;
  // A clean end: finalize (flushes issued work; non-blocking, so polled), then
  // destroy. An error on the way, or an abort asked meanwhile, ends in ncclCommAbort.
  // A group closed before its first use: let its initialisation finish first.
  ncclResult_t init = initialised_ ? ncclSuccess : ncclInProgress;
  while (init == ncclInProgress && !abort_requested_.load(std::memory_order_relaxed)) {
    if (ncclCommGetAsyncError(comm_, &init) != ncclSuccess) init = ncclInternalError;
    if (init == ncclInProgress) sched_yield();
  }
  initialised_ = init == ncclSuccess;
  bool clean = initialised_ && !abort_requested_.load(std::memory_order_relaxed);
  if (clean) {
    ncclResult_t state = ncclCommFinalize(comm_);
    while (state == ncclInProgress && !abort_requested_.load(std::memory_order_relaxed)) {
      if (ncclCommGetAsyncError(comm_, &state) != ncclSuccess) state = ncclInternalError;
      if (state == ncclInProgress) sched_yield();
    }
    clean = state == ncclSuccess;
  }
  if (clean)
    ncclCommDestroy(comm_);
  else
    ncclCommAbort(comm_);
  comm_ = nullptr;
}

void NcclComm::abort_now(const char* during) {
  if (drop_graphs_) drop_graphs_();
  if (comm_) ncclCommAbort(comm_);
  comm_ = nullptr;
  throw RunError(gpu::error_text(during, "the run was ended (hang watchdog, lost rank or signal): NCCL communicator "
                                         "aborted",
                                 device_));
}

void NcclComm::poll() {
  if (abort_requested_.load(std::memory_order_relaxed)) abort_now("waiting on NCCL");
  if (!comm_) throw RunError(gpu::error_text("waiting on NCCL", "the communicator was aborted", device_));
  ncclResult_t async = ncclSuccess;
  nccl::check(ncclCommGetAsyncError(comm_, &async), "ncclCommGetAsyncError", comm_, device_);
  nccl::check(async, "an NCCL operation in flight (ncclCommGetAsyncError)", comm_, device_);
}

void NcclComm::wait_in_progress(const char* call) {
  ncclResult_t state = ncclInProgress;
  while (state == ncclInProgress) {
    if (abort_requested_.load(std::memory_order_relaxed)) abort_now(call);
    nccl::check(ncclCommGetAsyncError(comm_, &state), "ncclCommGetAsyncError", comm_, device_);
    if (state == ncclInProgress) sched_yield();
  }
  nccl::check(state, call, comm_, device_);
}

ncclComm_t NcclComm::ready() {
  if (!comm_) throw RunError(gpu::error_text("NCCL", "the communicator was aborted", device_));
  if (!initialised_) {
    wait_in_progress("ncclCommInitRankConfig");
    initialised_ = true;
  }
  return comm_;
}

void NcclComm::check(ncclResult_t rc, const char* call) {
  if (rc == ncclInProgress) {
    wait_in_progress(call);
    return;
  }
  nccl::check(rc, call, comm_, device_);
}

void NcclComm::wait(cudaEvent_t event, const char* what) {
  while (true) {
    const cudaError_t rc = cudaEventQuery(event);
    if (rc == cudaSuccess) return;
    if (rc != cudaErrorNotReady) gpu::check(rc, what, device_);
    poll();
    sched_yield();
  }
}

}  // namespace fb

#include "nccl_comm.hpp"

#include <fmt/format.h>
#include <sched.h>

#include "cuda_common/error_text.hpp"
#include "fabricbench/core/errors.hpp"

namespace fb {

using nccl::Status;

NcclComm::NcclComm(nccl::Collectives& lib, int nranks, const std::string& id, int rank, int device)
    : lib_(lib), device_(device) {
  const Status s = lib_.init_rank(comm_, nranks, id, rank);
  if (s.state == Status::State::failed) {
    if (comm_) lib_.abort(comm_);
    comm_ = nullptr;
    fail("ncclCommInitRankConfig", s);
  }
}

NcclComm::NcclComm(NcclComm& parent, int color, int key) : lib_(parent.lib_), device_(parent.device_) {
  split(parent, color, key);
}

void NcclComm::split_out(NcclComm& parent) {
  NcclComm none(parent, -1, 0);  // gets no communicator; its destructor has nothing to free
}

void NcclComm::split(NcclComm& parent, int color, int key) {
  try {
    split_and_wait(parent, color, key);
  } catch (...) {
    // A constructor that throws runs no destructor: a child that NCCL had
    // already handed over (a split whose wait was ended by an abort or an
    // error) would be left to the process's end. Abort it here. One handed
    // over after this point cannot be reached: NCCL offers no way to cancel
    // a split in flight but aborting its parent, which the wait has done.
    if (const nccl::CommHandle child = __atomic_exchange_n(&comm_, nullptr, __ATOMIC_ACQ_REL)) lib_.abort(child);
    throw;
  }
}

void NcclComm::split_and_wait(NcclComm& parent, int color, int key) {
  const nccl::CommHandle p = parent.ready();
  // The parent carries the split's progress until every rank of it joined.
  parent.check(lib_.split(p, color, key, comm_), "ncclCommSplit");
  if (color < 0) return;
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
  const auto aborting = [this] { return abort_requested_.load(std::memory_order_relaxed); };
  // Polls `state` until the library is done with it; an error reads as failed.
  const auto settle = [&](Status state) {
    while (state.state == Status::State::in_progress && !aborting()) {
      state = lib_.async_error(comm_);
      if (state.state == Status::State::in_progress) sched_yield();
    }
    return state.state == Status::State::ok;
  };
  // A clean end: finalize (flushes issued work; non-blocking, so polled), then
  // destroy. An error on the way, or an abort asked meanwhile, ends in ncclCommAbort.
  // A group closed before its first use: let its initialisation finish first.
  initialised_ = initialised_ || settle(Status{Status::State::in_progress, ""});
  bool clean = initialised_ && !aborting();
  if (clean) clean = settle(lib_.finalize(comm_)) && !aborting();
  if (clean)
    lib_.destroy(comm_);
  else
    lib_.abort(comm_);
  comm_ = nullptr;
}

void NcclComm::fail(const char* call, const Status& status) const {
  throw RunError(gpu::error_text(call, fmt::format("{}; NCCL's log: {}", status.error, lib_.log_hint()), device_));
}

void NcclComm::abort_now(const char* during) {
  if (drop_graphs_) drop_graphs_();
  if (comm_) lib_.abort(comm_);
  comm_ = nullptr;
  throw RunError(gpu::error_text(during, "the run was ended (hang watchdog, lost rank or signal): NCCL communicator "
                                         "aborted",
                                 device_));
}

void NcclComm::poll() {
  if (abort_requested_.load(std::memory_order_relaxed)) abort_now("waiting on NCCL");
  if (!comm_) throw RunError(gpu::error_text("waiting on NCCL", "the communicator was aborted", device_));
  const Status async = lib_.async_error(comm_);
  if (async.state == Status::State::failed) fail("an NCCL operation in flight (ncclCommGetAsyncError)", async);
}

void NcclComm::wait_in_progress(const char* call) {
  Status state{Status::State::in_progress, ""};
  while (state.state == Status::State::in_progress) {
    if (abort_requested_.load(std::memory_order_relaxed)) abort_now(call);
    state = lib_.async_error(comm_);
    if (state.state == Status::State::in_progress) sched_yield();
  }
  if (state.state == Status::State::failed) fail(call, state);
}

nccl::CommHandle NcclComm::ready() {
  if (!comm_) throw RunError(gpu::error_text("NCCL", "the communicator was aborted", device_));
  if (!initialised_) {
    wait_in_progress("ncclCommInitRankConfig");
    initialised_ = true;
  }
  return comm_;
}

void NcclComm::check(const Status& status, const char* call) {
  if (status.state == Status::State::in_progress) return wait_in_progress(call);
  if (status.state == Status::State::failed) fail(call, status);
}

void NcclComm::wait(gpu::DeviceStream& stream) {
  stream.mark();
  while (!stream.mark_passed()) {
    poll();
    sched_yield();
  }
}

}  // namespace fb

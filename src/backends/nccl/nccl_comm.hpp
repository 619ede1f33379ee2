// One NCCL communicator, owned by the engine's thread from creation to
// destruction. It is created non-blocking (ncclCommInitRankConfig with
// config.blocking = 0), so no NCCL call blocks the thread: every call that
// answers ncclInProgress is polled to completion with ncclCommGetAsyncError,
// as NCCL's user guide asks of non-blocking communicators ("Communicators",
// fault tolerance: poll until ncclSuccess before the next NCCL call).
//
// The hang watchdog's thread only raises a flag (request_abort); the
// engine's thread sees it in its next poll - inside any wait on NCCL work,
// initialisation included - and calls ncclCommAbort itself, so the
// communicator is never used after it was freed and never aborted while
// another thread is inside NCCL with it. CUDA graphs that captured the
// communicator are dropped first (ncclCommAbort waits for graph execs that
// hold it). The watchdog's timed _exit stays the backstop for a wait that
// never comes back to a poll (a wedged driver).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <functional>

namespace fb {

class NcclComm {
 public:
  // Starts a non-blocking ncclCommInitRankConfig; ready() waits for it.
  NcclComm(int nranks, const ncclUniqueId& id, int rank, int device);
  // This rank's part of ncclCommSplit(parent, color, key): collective over the
  // parent, whose ranks in none of the new groups call split_out(). Much
  // cheaper than a fresh ncclCommInitRank at scale (it reuses the parent's
  // bootstrap); the child is non-blocking too, and ready() waits for it.
  NcclComm(NcclComm& parent, int color, int key);
  static void split_out(NcclComm& parent);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  // Waits, polling, until initialisation completed; the communicator for NCCL calls.
  ncclComm_t ready();
  // Throws RunError on an error of `rc`; on ncclInProgress polls until NCCL is done with the call.
  void check(ncclResult_t rc, const char* call);
  // One poll of a wait on NCCL's work: throws when an abort was requested
  // (after aborting, on this thread) or NCCL reports an asynchronous error.
  void poll();
  // Waits for `event` on the engine's thread, polling (an event after NCCL work).
  void wait(cudaEvent_t event, const char* what);

  // From any thread, returns at once: the engine's thread aborts at its next poll.
  void request_abort() { abort_requested_.store(true, std::memory_order_relaxed); }
  // Called before the abort on the engine's thread: drops graphs that captured the communicator.
  void on_abort(std::function<void()> drop_graphs) { drop_graphs_ = std::move(drop_graphs); }
  int device() const { return device_; }

 private:
  void wait_in_progress(const char* call);
  void split(NcclComm& parent, int color, int key);
  [[noreturn]] void abort_now(const char* during);

  ncclComm_t comm_ = nullptr;
  int device_;
  bool initialised_ = false;
  std::atomic<bool> abort_requested_{false};
  std::function<void()> drop_graphs_;
};

}  // namespace fb

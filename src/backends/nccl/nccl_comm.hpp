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
//
// Plain C++: the library is reached through nccl::Collectives
// (collectives.hpp), NCCL in the plugin and the host double in tests.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "collectives.hpp"
#include "cuda_common/devices.hpp"

namespace fb {

class NcclComm {
 public:
  // Starts a non-blocking ncclCommInitRankConfig; ready() waits for it.
  NcclComm(nccl::Collectives& lib, int nranks, const std::string& id, int rank, int device);
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
  nccl::CommHandle ready();
  // Throws RunError on a failed call; on in_progress polls until NCCL is done with the call.
  void check(const nccl::Status& status, const char* call);
  // One poll of a wait on NCCL's work: throws when an abort was requested
  // (after aborting, on this thread) or NCCL reports an asynchronous error.
  void poll();
  // Waits on the engine's thread, polling, for everything queued on `stream` so far.
  void wait(gpu::DeviceStream& stream);

  // From any thread, returns at once: the engine's thread aborts at its next poll.
  void request_abort() { abort_requested_.store(true, std::memory_order_relaxed); }
  // Called before the abort on the engine's thread: drops graphs that captured the communicator.
  void on_abort(std::function<void()> drop_graphs) { drop_graphs_ = std::move(drop_graphs); }
  int device() const { return device_; }
  nccl::Collectives& lib() const { return lib_; }

 private:
  void wait_in_progress(const char* call);
  void split(NcclComm& parent, int color, int key);
  void split_and_wait(NcclComm& parent, int color, int key);
  [[noreturn]] void abort_now(const char* during);
  [[noreturn]] void fail(const char* call, const nccl::Status& status) const;

  nccl::Collectives& lib_;
  nccl::CommHandle comm_ = nullptr;
  int device_;
  bool initialised_ = false;
  std::atomic<bool> abort_requested_{false};
  std::function<void()> drop_graphs_;
};

}  // namespace fb

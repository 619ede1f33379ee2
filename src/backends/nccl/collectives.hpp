// The collective library under the nccl backend, as the project's own
// interface: NCCL's calls with no NCCL type in sight. CudaNccl
// (cuda_nccl.cpp, in the plugin) forwards each to NCCL and reports its
// result, deciding nothing; the host double of the tests
// (tests/support/sim_nccl.hpp) runs the same calls over MPI on the host
// buffers of the device double, so the backend's own logic (non-blocking
// initialisation and splits polled to completion, aborts, asynchronous
// errors, in-place conventions, groups, graph capture, path labels) runs
// multi-rank in CI. Communicators are non-blocking: a call may answer
// `in_progress`, and async_error() is polled until it does not.
#pragma once

#include <cstddef>
#include <string>

#include "cuda_common/devices.hpp"
#include "fabricbench/core/types.hpp"

namespace fb::nccl {

// What a call, or a communicator's pending work, came to.
struct Status {
  enum class State { ok, in_progress, failed };
  State state = State::ok;
  std::string error;  // failed: the library's name for the error and its last message

  static Status ok() { return {}; }
  bool done() const { return state != State::in_progress; }
};

// The library's communicator; null: none (a split that gave this rank none).
using CommHandle = void*;

class Collectives {
 public:
  virtual ~Collectives() = default;

  virtual std::string version() = 0;  // "2.28.3"
  virtual bool has_datatype(Dtype dtype) = 0;
  // ncclGather/ncclScatter (NCCL 2.28); without them the backend groups sends and receives.
  virtual bool has_gather() = 0;
  // Where the library logs (NCCL_DEBUG_FILE), for error messages.
  virtual std::string log_hint() = 0;

  // Bytes that rank 0 makes and every rank passes to init_rank.
  virtual std::string unique_id() = 0;
  // Non-blocking: `comm` is set at once, ready once async_error() says ok.
  virtual Status init_rank(CommHandle& comm, int nranks, const std::string& id, int rank) = 0;
  // Collective over `parent`; color < 0: this rank joins no child. The child
  // may arrive later, written into `child` from the library's own thread.
  virtual Status split(CommHandle parent, int color, int key, CommHandle& child) = 0;
  virtual Status async_error(CommHandle comm) = 0;
  virtual Status finalize(CommHandle comm) = 0;
  virtual void destroy(CommHandle comm) noexcept = 0;
  virtual void abort(CommHandle comm) noexcept = 0;

  // Queued on `stream`; `count` elements of `dtype` per call as NCCL counts them.
  struct Call {
    const void* send = nullptr;
    void* recv = nullptr;
    std::size_t count = 0;
    Dtype dtype = Dtype::float32;
    RedOp redop = RedOp::sum;
    int root = 0;  // broadcast, reduce, gather, scatter; the peer of send and recv
  };
  virtual Status all_reduce(const Call& c, CommHandle comm, gpu::DeviceStream& stream) = 0;
  virtual Status all_gather(const Call& c, CommHandle comm, gpu::DeviceStream& stream) = 0;
  virtual Status reduce_scatter(const Call& c, CommHandle comm, gpu::DeviceStream& stream) = 0;
  virtual Status broadcast(const Call& c, CommHandle comm, gpu::DeviceStream& stream) = 0;
  virtual Status reduce(const Call& c, CommHandle comm, gpu::DeviceStream& stream) = 0;
  virtual Status gather(const Call& c, CommHandle comm, gpu::DeviceStream& stream) = 0;
  virtual Status scatter(const Call& c, CommHandle comm, gpu::DeviceStream& stream) = 0;
  virtual Status send(const Call& c, CommHandle comm, gpu::DeviceStream& stream) = 0;
  virtual Status recv(const Call& c, CommHandle comm, gpu::DeviceStream& stream) = 0;
  virtual Status group_start() = 0;
  virtual Status group_end() = 0;
};

}  // namespace fb::nccl

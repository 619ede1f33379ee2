// Timing device work the way nccl-tests queues it: a batch of iterations
// launched back to back on one stream with an event after each (after each
// group, for iterations under 50 us: every iteration of a group gets the
// group's mean), then a single synchronisation; each iteration's time is the
// span between its event and the previous one. The group size comes from the
// engine's agreed time per iteration (IterationTimes::agreed_us), so every
// rank groups alike and the engine's per-iteration max compares like with
// like. With graphs, the batch is captured once and replayed between two
// events, and every iteration gets the batch mean.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "fabricbench/backends/backend.hpp"

namespace fb::gpu {

class StreamTimer {
 public:
  // `wait` waits for an event on the stream; empty: cudaEventSynchronize.
  // NCCL's waits poll instead (nccl_comm.hpp), so that an abort can end them.
  using Wait = std::function<void(cudaEvent_t)>;
  StreamTimer(cudaStream_t stream, int device, Wait wait = {})
      : stream_(stream), device_(device), wait_(std::move(wait)) {}
  ~StreamTimer();
  StreamTimer(const StreamTimer&) = delete;
  StreamTimer& operator=(const StreamTimer&) = delete;

  // `enqueue` queues one iteration on the stream without waiting for it.
  void time_queued(IterationTimes times, const std::function<void()>& enqueue);
  void time_graph(IterationTimes times, const std::function<void()>& enqueue);
  // Frees the captured graph (before ncclCommAbort, which waits for graph execs holding its communicator).
  void drop_graph();

 private:
  void ensure_events(std::size_t n);
  void capture(std::size_t n, const std::function<void()>& enqueue);
  void wait(cudaEvent_t event);

  cudaStream_t stream_;
  int device_;
  std::vector<cudaEvent_t> events_;
  cudaGraphExec_t graph_ = nullptr;
  std::size_t graph_iterations_ = 0;
  Wait wait_;
};

}  // namespace fb::gpu

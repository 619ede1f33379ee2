// Timing device work the way nccl-tests queues it: a batch of iterations
// launched back to back on one stream with an event after each (after each
// group, for iterations under 50 us), then a single synchronisation; each
// iteration's time is the span between its event and the previous one. With graphs, the batch is captured once and
// replayed between two events, and every iteration gets the batch mean.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "fabricbench/backends/backend.hpp"

namespace fb::gpu {

class StreamTimer {
 public:
  StreamTimer(cudaStream_t stream, int device) : stream_(stream), device_(device) {}
  ~StreamTimer();
  StreamTimer(const StreamTimer&) = delete;
  StreamTimer& operator=(const StreamTimer&) = delete;

  // `enqueue` queues one iteration on the stream without waiting for it.
  void time_queued(IterationTimes times, const std::function<void()>& enqueue);
  void time_graph(IterationTimes times, const std::function<void()>& enqueue);

 private:
  void ensure_events(std::size_t n);
  void capture(std::size_t n, const std::function<void()>& enqueue);
  void drop_graph();
  std::size_t group_size() const;

  cudaStream_t stream_;
  int device_;
  std::vector<cudaEvent_t> events_;
  cudaGraphExec_t graph_ = nullptr;
  std::size_t graph_iterations_ = 0;
  double last_mean_us_ = 0;  // of this op's previous batch; sizes the groups
};

}  // namespace fb::gpu

// Timing device work the way nccl-tests queues it: a batch of iterations
// launched back to back on one stream with an event after each (after each
// group, for iterations under 50 us: every iteration of a group gets the
// group's mean), then a single synchronisation; each iteration's time is the
// span between its event and the previous one. The group size comes from the
// engine's agreed time per iteration (IterationTimes::agreed_us), so every
// rank groups alike and the engine's per-iteration max compares like with
// like. With graphs, the batch is captured once and replayed between two
// events, and every iteration gets the batch mean. Either way the engine is
// told how many iterations one timing spanned (IterationTimes::
// iterations_per_timing), so it counts independent samples, not copies.
//
// Plain C++: the stream is a DeviceQueue (CudaQueue on a GPU, a host double
// in the unit tests).
#pragma once

#include <functional>
#include <memory>

#include "device_queue.hpp"
#include "fabricbench/core/backend.hpp"

namespace fb::gpu {

class StreamTimer {
 public:
  explicit StreamTimer(std::unique_ptr<DeviceQueue> queue) : queue_(std::move(queue)) {}

  // `enqueue` queues one iteration on the stream without waiting for it.
  void time_queued(IterationTimes times, const std::function<void()>& enqueue);
  // The same `times.start_us.size()` iterations captured once into a graph
  // (again only when the count changes) and replayed exactly once per call:
  // the captured work runs as many times as iterations were asked for, which
  // an in-place reduction's check depends on.
  void time_graph(IterationTimes times, const std::function<void()>& enqueue);
  // Frees the captured graph (before ncclCommAbort, which waits for graph execs holding its communicator).
  void drop_graph() noexcept;

 private:
  void capture(std::size_t n, const std::function<void()>& enqueue);

  std::unique_ptr<DeviceQueue> queue_;
  std::size_t graph_iterations_ = 0;  // 0: no graph
};

}  // namespace fb::gpu

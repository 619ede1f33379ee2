#include "stream_timer.hpp"

#include "gpu_error.hpp"

namespace fb::gpu {

StreamTimer::~StreamTimer() {
  drop_graph();
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

void StreamTimer::ensure_events(std::size_t n) {
  while (events_.size() < n) {
    cudaEvent_t e = nullptr;
    check(cudaEventCreate(&e), "cudaEventCreate", device_);
    events_.push_back(e);
  }
}

void StreamTimer::time_queued(IterationTimes times, const std::function<void()>& enqueue) {
  const std::size_t n = times.start_us.size();
  ensure_events(n + 1);
  const double host_start = now_us();
  check(cudaEventRecord(events_[0], stream_), "cudaEventRecord", device_);
  for (std::size_t i = 0; i < n; ++i) {
    enqueue();
    check(cudaEventRecord(events_[i + 1], stream_), "cudaEventRecord", device_);
  }
  check(cudaEventSynchronize(events_[n]), "cudaEventSynchronize", device_);
  // Start times on the engine's clock: the host clock when the first event was
  // queued plus the device's own offsets, so lateness compares across ranks.
  float offset_ms = 0;
  for (std::size_t i = 0; i < n; ++i) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, events_[i], events_[i + 1]), "cudaEventElapsedTime", device_);
    times.start_us[i] = host_start + offset_ms * 1e3;
    times.duration_us[i] = ms * 1e3;
    offset_ms += ms;
  }
}

void StreamTimer::drop_graph() {
  if (graph_) cudaGraphExecDestroy(graph_);
  graph_ = nullptr;
  graph_iterations_ = 0;
}

void StreamTimer::capture(std::size_t n, const std::function<void()>& enqueue) {
  drop_graph();
  cudaGraph_t graph = nullptr;
  check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture", device_);
  try {
    for (std::size_t i = 0; i < n; ++i) enqueue();
  } catch (...) {
    cudaStreamEndCapture(stream_, &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  check(cudaStreamEndCapture(stream_, &graph), "cudaStreamEndCapture", device_);
  const cudaError_t rc = cudaGraphInstantiate(&graph_, graph, 0);
  cudaGraphDestroy(graph);
  check(rc, "cudaGraphInstantiate", device_);
  graph_iterations_ = n;
  // One untimed replay: the first launch of a graph uploads it to the device.
  check(cudaGraphLaunch(graph_, stream_), "cudaGraphLaunch", device_);
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize", device_);
}

void StreamTimer::time_graph(IterationTimes times, const std::function<void()>& enqueue) {
  const std::size_t n = times.start_us.size();
  if (n == 0) return;
  if (!graph_ || graph_iterations_ != n) capture(n, enqueue);
  ensure_events(2);
  const double host_start = now_us();
  check(cudaEventRecord(events_[0], stream_), "cudaEventRecord", device_);
  check(cudaGraphLaunch(graph_, stream_), "cudaGraphLaunch", device_);
  check(cudaEventRecord(events_[1], stream_), "cudaEventRecord", device_);
  check(cudaEventSynchronize(events_[1]), "cudaEventSynchronize", device_);
  float ms = 0;
  check(cudaEventElapsedTime(&ms, events_[0], events_[1]), "cudaEventElapsedTime", device_);
  const double each_us = ms * 1e3 / static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) {
    times.start_us[i] = host_start + each_us * static_cast<double>(i);
    times.duration_us[i] = each_us;
  }
}

}  // namespace fb::gpu

#include "stream_timer.hpp"

#include <algorithm>

#include "event_groups.hpp"
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

void StreamTimer::wait(cudaEvent_t event) {
  if (wait_) return wait_(event);
  check(cudaEventSynchronize(event), "cudaEventSynchronize", device_);
}

void StreamTimer::time_queued(IterationTimes times, const std::function<void()>& enqueue) {
  const std::size_t n = times.start_us.size();
  if (n == 0) return;
  const std::size_t group = std::min(event_group_size(times.agreed_us), n);
  const std::size_t groups = (n + group - 1) / group;
  if (times.iterations_per_timing) *times.iterations_per_timing = group;
  ensure_events(groups + 1);
  const double host_start = now_us();
  check(cudaEventRecord(events_[0], stream_), "cudaEventRecord", device_);
  for (std::size_t g = 0; g < groups; ++g) {
    for (std::size_t i = g * group; i < std::min(n, (g + 1) * group); ++i) enqueue();
    check(cudaEventRecord(events_[g + 1], stream_), "cudaEventRecord", device_);
  }
  // Group by group as they complete: the hang watchdog sees a long queue
  // progress (IterationTimes::issued) instead of one silent wait.
  for (std::size_t g = 0; g < groups; ++g) {
    wait(events_[g + 1]);
    for (std::size_t i = g * group; i < std::min(n, (g + 1) * group); ++i) count_issued(times.issued);
  }
  // Start times on the engine's clock: the host clock when the first event was
  // queued plus the device's own offsets, so lateness compares across ranks.
  double offset_us = 0;
  for (std::size_t g = 0; g < groups; ++g) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, events_[g], events_[g + 1]), "cudaEventElapsedTime", device_);
    const std::size_t first = g * group, last = std::min(n, first + group);
    const double each_us = ms * 1e3 / static_cast<double>(last - first);
    for (std::size_t i = first; i < last; ++i) {
      times.start_us[i] = host_start + offset_us;
      times.duration_us[i] = each_us;
      offset_us += each_us;
    }
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
  ensure_events(1);
  check(cudaEventRecord(events_[0], stream_), "cudaEventRecord", device_);
  wait(events_[0]);
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
  wait(events_[1]);
  for (std::size_t i = 0; i < n; ++i) count_issued(times.issued);  // one replay: all complete together
  float ms = 0;
  check(cudaEventElapsedTime(&ms, events_[0], events_[1]), "cudaEventElapsedTime", device_);
  const double each_us = ms * 1e3 / static_cast<double>(n);
  if (times.iterations_per_timing) *times.iterations_per_timing = n;  // one replay, one timing
  for (std::size_t i = 0; i < n; ++i) {
    times.start_us[i] = host_start + each_us * static_cast<double>(i);
    times.duration_us[i] = each_us;
  }
}

}  // namespace fb::gpu
